// Runs firmware on the CipherSoC compiled by CXXRTL (see cores/soc/simulate.py).
//
//   model IMAGE MAX_CYCLES
//
// Loads IMAGE (raw bytes from RAM address 0) into the SoC's RAM, holds reset for 4 cycles, then
// clocks the SoC until the firmware writes SYSCTL_EXIT, the CPU traps, or MAX_CYCLES pass. Every
// byte the firmware sends to the UART goes to stdout as it is sent. The last line on stderr says
// how the run ended:
//   SOCSIM exit <status> <cycles>
//   SOCSIM trap <pc, hex> <cycles>
//   SOCSIM timeout <cycles>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "design.cc"

namespace {

[[noreturn]] void fail(const std::string &message) {
    std::fprintf(stderr, "SOCSIM error %s\n", message.c_str());
    std::exit(2);
}

bool ends_with(const std::string &text, const std::string &suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The debug item whose hierarchical name ends with `suffix` and has the given type.
cxxrtl::debug_item *find_item(cxxrtl::debug_items &items, const std::string &suffix,
                              unsigned type) {
    for (auto &entry : items.table)
        if (ends_with(entry.first, suffix))
            for (auto &item : entry.second)
                if (item.type == type)
                    return &item;
    return nullptr;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 3) fail("usage: model IMAGE MAX_CYCLES");
    unsigned long long max_cycles = std::strtoull(argv[2], nullptr, 10);

    cxxrtl_design::p_top top;
    cxxrtl::debug_items items;
    top.debug_info(&items, nullptr, "");

    cxxrtl::debug_item *ram = find_item(items, "ram memory", cxxrtl::debug_item::MEMORY);
    if (ram == nullptr) fail("no RAM in the model");
    if (ram->width != 32) fail("RAM words are not 32 bits wide");
    std::FILE *file = std::fopen(argv[1], "rb");
    if (file == nullptr) fail(std::string("cannot open ") + argv[1]);
    std::vector<unsigned char> image;
    for (int c; (c = std::fgetc(file)) != EOF;) image.push_back((unsigned char)c);
    std::fclose(file);
    if (image.size() > (size_t)ram->depth * 4) fail("image larger than the RAM");
    image.resize((image.size() + 3) & ~size_t(3), 0);
    for (size_t word = 0; word < image.size() / 4; word++)
        ram->curr[word] = (uint32_t)image[4 * word] | (uint32_t)image[4 * word + 1] << 8 |
                          (uint32_t)image[4 * word + 2] << 16 | (uint32_t)image[4 * word + 3] << 24;

    // The program counter, for the trap message (absent if the model does not keep it).
    cxxrtl::debug_item *pc = find_item(items, "reg_pc", cxxrtl::debug_item::VALUE);
    if (pc == nullptr) pc = find_item(items, "reg_pc", cxxrtl::debug_item::WIRE);

    unsigned long long cycle = 0;
    for (; cycle < max_cycles + 4; cycle++) {
        top.p_rst.set<bool>(cycle < 4);
        top.p_clk.set<bool>(false);
        top.step();
        if (top.p_console__valid.get<bool>()) {
            std::putchar(top.p_console__byte.get<unsigned>());
            if (top.p_console__byte.get<unsigned>() == '\n') std::fflush(stdout);
        }
        top.p_clk.set<bool>(true);
        top.step();
        if (top.p_exited.get<bool>()) {
            std::fflush(stdout);
            std::fprintf(stderr, "SOCSIM exit %u %llu\n", top.p_exit__status.get<uint32_t>(),
                         cycle - 3);
            return 0;
        }
        if (top.p_trap.get<bool>()) {
            std::fflush(stdout);
            std::fprintf(stderr, "SOCSIM trap %08x %llu\n", pc ? (unsigned)pc->curr[0] : 0u,
                         cycle - 3);
            return 0;
        }
    }
    std::fflush(stdout);
    std::fprintf(stderr, "SOCSIM timeout %llu\n", max_cycles);
    return 0;
}
