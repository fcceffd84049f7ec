// Linked with driver.c to make it a C++ host: with -DUSE_COUT it uses
// std::cout (so the executable has a copy relocation of it); with
// -DREPLACE_NEW it replaces operator new/delete and counts the calls.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#ifdef USE_COUT
static int used = (std::cout << "cxxhost: iostream in use" << std::endl, 0);
#endif
#ifdef REPLACE_NEW
static unsigned long n_new;
void *operator new(std::size_t n) {
    n_new++;
    if (void *p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
static struct Report {
    ~Report() { std::printf("host operator new calls: %lu\n", n_new); }
} report;
#endif
