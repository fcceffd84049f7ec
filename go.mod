module github.com/dynop/dynop

go 1.26
