/* A library with a large initial-exec TLS block (TLS_SIZE bytes). */
#ifndef TLS_SIZE
#define TLS_SIZE 1024
#endif
__thread __attribute__((tls_model("initial-exec"))) volatile char big[TLS_SIZE];
float plugin_run(void) {
    big[TLS_SIZE - 1] = 32;
    return big[TLS_SIZE - 1];
}
