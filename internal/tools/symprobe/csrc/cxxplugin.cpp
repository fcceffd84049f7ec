// A C++ plugin: std::string, an exception, std::cout, operator new.
#include <iostream>
#include <stdexcept>
#include <string>
extern "C" float plugin_run() {
    std::string s = "thrown and caught";
    for (int i = 0; i < 1000; i++) {
        int *volatile p = new int(i); // volatile: the pair is not elided
        delete p;
    }
    try {
        throw std::runtime_error(s);
    } catch (const std::exception &e) {
        std::cout << "cxxplugin: " << e.what() << std::endl;
        if (!std::cout) return -1;
    }
    return 32;
}
