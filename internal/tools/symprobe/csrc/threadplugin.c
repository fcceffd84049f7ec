/* A plugin that uses __thread and creates a thread itself. */
#include <pthread.h>
static __thread int tv;
static void *fn(void *a) {
    (void)a;
    tv += 5;
    return (void *)(long)tv;
}
int plugin_thread(void) {
    pthread_t t;
    void *r;
    if (pthread_create(&t, 0, fn, 0)) return -1;
    pthread_join(t, &r);
    return (int)(long)r;
}
int plugin_tls_bump(void) { return ++tv; }
