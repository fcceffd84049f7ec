package blas

// UncheckedSgemm calls the sgemm of m, a native table's binding, without
// the binding's checks, so that tests reach the table's own.
func UncheckedSgemm(m BLAS, transA, transB bool, mm, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return m.(table).sgemm(transA, transB, mm, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
