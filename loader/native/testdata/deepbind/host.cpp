// A C++ host program that runs the RTLD_DEEPBIND safety rule
// (loader/native/deepbind.c, linked in) and prints its verdict, as host.c
// does. It takes the addresses of operator new and delete in its code:
// built non-PIE, it has undefined symbols _Znwm and _ZdlPv with their PLT
// entries' addresses, which are no definitions.
//
// With -DUSE_COUT it prints with std::cout, which the executable then has
// a copy of (a copy relocation, a definition): with it, a deep-bound
// plugin would use libstdc++'s own, uninitialized std::cout, and the rule
// must say so.
#include <cstddef>
#include <cstdio>
#include <new>
#ifdef USE_COUT
#include <iostream>
#endif

extern "C" int dynop_loader_deep_bind_unsafe(char *why, std::size_t cap);

static void *(*volatile host_new)(std::size_t);
static void (*volatile host_delete)(void *) noexcept;

int main() {
    char why[256] = "";
    host_new = &::operator new;
    host_delete = &::operator delete;
    void *p = host_new(16);
    int unsafe = dynop_loader_deep_bind_unsafe(why, sizeof why);
    host_delete(p);
#ifdef USE_COUT
    std::cout << "unsafe=" << unsafe << " why=" << why << std::endl;
#else
    std::printf("unsafe=%d why=%s\n", unsafe, why);
#endif
    return 0;
}
