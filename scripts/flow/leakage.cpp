// Leakage evaluator for scripts/flow/leakage.py: simulates a synthesized LUT4 netlist cycle by
// cycle, counts the nets that toggle each cycle, and keeps streaming moments for a
// fixed-versus-random (TVLA) test. No trace is stored.
//
// Usage:
//   leakage NETLIST CONFIG    run traces; CONFIG is a file of "name value" lines (see main)
//   leakage --stats           read "<count> <sample>..." on stdin and print the moments of the
//                             samples (the statistics alone, for the tests)
//   leakage --cycles NETLIST N  run N cycles with the inputs at 0 and print each cycle's
//                             flip-flop and cell toggles (the power model alone, for the tests)
//
// The netlist (written by leakage.py from Yosys' JSON) is whitespace-separated text:
//   LEAKNET 1
//   nets N                       net 0 is constant 0, net 1 constant 1
//   ports P, then per port:      name width net...            (inputs and outputs)
//   ffs F, then per flip-flop:   q d ce r rval gated init inv (ce/r are nets; gated: the reset
//                                                               only acts when ce is enabled;
//                                                               inv: bit 0 inverts ce, bit 1 r)
//   cells C, then per cell:      out a b c d table            (in evaluation order; out = the
//                                                               4-input truth table at index
//                                                               a + 2b + 4c + 8d)
// Flip-flop outputs and cell outputs are the counted nets: group "ff" and group "lut".
//
// The power sample of a cycle is the Hamming distance between the settled values of the counted
// nets in that cycle and in the one before (flip-flops changed by the edge between them, cell
// outputs after the new inputs and flip-flop values settle). Glitches are not modelled.
//
// Output (stdout):
//   CYCLES L
//   OUTPUT <hex>                 the output payload of the first fixed-block trace
//   M <cycle> <series> <population> <n> <mean> <M2> <M3> <M4>
//   N <net> <population> <n> <mean> <M2> <M3> <M4>   with "probe C": each counted net's
//                                toggles (0 or 1) in cycle C of the block
//   SECONDS <s>
// series 0: all counted nets, 1: flip-flops, 2: cell outputs; population 0: fixed, 1: random.
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &message) {
    std::cerr << "leakage evaluator: " << message << std::endl;
    std::exit(2);
}

// Running mean and centred moment sums M2..M4 of a sample stream (Pebay, "Formulas for robust,
// one-pass parallel computation of covariances and arbitrary-order statistical moments", Sandia
// SAND2008-6212, eq. 2.1-2.3 for one new value).
struct Moments {
    double n = 0, mean = 0, m2 = 0, m3 = 0, m4 = 0;
    void add(double x) {
        double n1 = n;
        n += 1;
        double delta = x - mean;
        double dn = delta / n;
        double dn2 = dn * dn;
        double term1 = delta * dn * n1;
        mean += dn;
        m4 += term1 * dn2 * (n * n - 3 * n + 3) + 6 * dn2 * m2 - 4 * dn * m3;
        m3 += term1 * dn * (n - 2) - 3 * dn * m2;
        m2 += term1;
    }
};

void print_moments(const Moments &m) {
    std::printf("%.0f %.17g %.17g %.17g %.17g", m.n, m.mean, m.m2, m.m3, m.m4);
}

// xoshiro256** (Blackman and Vigna), seeded through splitmix64.
struct Rng {
    uint64_t s[4];
    explicit Rng(uint64_t seed) {
        for (auto &word : s) {
            seed += 0x9e3779b97f4a7c15ULL;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
            word = z ^ (z >> 31);
        }
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t next() {
        uint64_t result = rotl(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
        s[2] ^= t; s[3] = rotl(s[3], 45);
        return result;
    }
};

struct FlipFlop { uint32_t q, d, ce, r; uint8_t rval, gated, init, inv; };
struct Cell { uint32_t out, a, b, c, d; uint16_t table; };
typedef std::vector<uint32_t> Port;

struct Netlist {
    size_t nets = 0;
    std::map<std::string, Port> ports;
    std::vector<FlipFlop> ffs;
    std::vector<Cell> cells;

    void read(const char *path) {
        std::ifstream in(path);
        if (!in) fail(std::string("cannot read ") + path);
        std::string word;
        unsigned version = 0;
        in >> word >> version;
        if (word != "LEAKNET" || version != 1) fail("not a LEAKNET 1 netlist");
        size_t count;
        in >> word >> nets >> word >> count;
        for (size_t i = 0; i < count; i++) {
            std::string name;
            size_t width;
            in >> name >> width;
            Port &port = ports[name];
            port.resize(width);
            for (auto &net : port) in >> net;
        }
        in >> word >> count;
        ffs.resize(count);
        for (auto &ff : ffs) {
            unsigned rval, gated, init, inv;
            in >> ff.q >> ff.d >> ff.ce >> ff.r >> rval >> gated >> init >> inv;
            ff.rval = rval; ff.gated = gated; ff.init = init; ff.inv = inv;
        }
        in >> word >> count;
        cells.resize(count);
        for (auto &cell : cells) {
            unsigned table;
            in >> cell.out >> cell.a >> cell.b >> cell.c >> cell.d >> table;
            cell.table = table;
        }
        if (!in) fail("netlist ends early");
    }

    const Port &port(const std::string &name) const {
        auto it = ports.find(name);
        if (it == ports.end()) fail("the netlist has no port " + name);
        return it->second;
    }
    const Port *optional_port(const std::string &name) const {
        auto it = ports.find(name);
        return it == ports.end() ? nullptr : &it->second;
    }
};

// The netlist in simulation: one byte per net.
struct Simulator {
    const Netlist &net;
    std::vector<uint8_t> v;
    std::vector<uint8_t> next_q;
    uint64_t ff_toggles = 0;   // at the last edge

    explicit Simulator(const Netlist &netlist) : net(netlist), v(netlist.nets, 0),
                                                  next_q(netlist.ffs.size()) {
        v[1] = 1;
        for (const auto &ff : net.ffs) v[ff.q] = ff.init;
    }
    // Settle the cells; return how many cell outputs changed.
    uint64_t settle() {
        uint64_t toggles = 0;
        uint8_t *values = v.data();
        for (const Cell &cell : net.cells) {
            unsigned index = values[cell.a] | values[cell.b] << 1 | values[cell.c] << 2 |
                             values[cell.d] << 3;
            uint8_t value = (cell.table >> index) & 1;
            toggles += value ^ values[cell.out];
            values[cell.out] = value;
        }
        return toggles;
    }
    // A rising clock edge; the flip-flop toggles are kept in ff_toggles.
    void edge() {
        uint8_t *values = v.data();
        size_t i = 0;
        for (const FlipFlop &ff : net.ffs) {
            uint8_t q = values[ff.q];
            bool ce = values[ff.ce] ^ (ff.inv & 1), r = values[ff.r] ^ (ff.inv >> 1);
            if (r && (!ff.gated || ce)) q = ff.rval;
            else if (ce) q = values[ff.d];
            next_q[i++] = q;
        }
        uint64_t toggles = 0;
        i = 0;
        for (const FlipFlop &ff : net.ffs) {
            toggles += next_q[i] ^ values[ff.q];
            values[ff.q] = next_q[i++];
        }
        ff_toggles = toggles;
    }
    bool get(const Port &port) const { return v[port[0]]; }
    void set(const Port &port, bool value) { v[port[0]] = value; }
    void set_bits(const Port &port, size_t offset, const std::vector<uint8_t> &bits) {
        for (size_t i = 0; i < bits.size(); i++) v[port[offset + i]] = bits[i];
    }
    void set_random(const Port &port, Rng &rng) {
        for (size_t i = 0; i < port.size(); i += 64) {
            uint64_t word = rng.next();
            for (size_t j = i; j < port.size() && j < i + 64; j++) v[port[j]] = (word >> (j - i)) & 1;
        }
    }
};

std::vector<uint8_t> parse_bits(const std::string &hex, size_t width) {
    std::vector<uint8_t> bits(width, 0);
    size_t bit = 0;
    for (size_t i = hex.size(); i-- > 0; bit += 4) {
        char c = hex[i];
        unsigned digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
                         c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
        if (digit == 99) fail("bad hexadecimal value " + hex);
        for (unsigned k = 0; k < 4; k++)
            if (digit >> k & 1) {
                if (bit + k >= width) fail("value " + hex + " is too wide");
                bits[bit + k] = 1;
            }
    }
    return bits;
}

std::string hex_of(const Simulator &sim, const Port &port) {
    std::string out;
    static const char digits[] = "0123456789abcdef";
    for (size_t i = (port.size() + 3) / 4; i-- > 0;) {
        unsigned digit = 0;
        for (size_t k = 0; k < 4 && 4 * i + k < port.size(); k++)
            digit |= sim.v[port[4 * i + k]] << k;
        out += digits[digit];
    }
    return out;
}

struct Config {
    uint64_t traces = 0, seed = 1, max_cycles = 100000;
    size_t block_bits = 0, block_offset = 0, decrypt_offset = 0;
    std::string key, fixed_block;
    bool random_on = true;
    bool control = false;       // both populations random: a check of the test itself
    int64_t probe = -1;         // a cycle whose toggles are also kept net by net
    int reset_cycles = 2;

    void read(const char *path) {
        std::ifstream in(path);
        if (!in) fail(std::string("cannot read ") + path);
        std::string name, value;
        while (in >> name >> value) {
            if (name == "traces") traces = std::stoull(value);
            else if (name == "seed") seed = std::stoull(value);
            else if (name == "max_cycles") max_cycles = std::stoull(value);
            else if (name == "block_bits") block_bits = std::stoull(value);
            else if (name == "block_offset") block_offset = std::stoull(value);
            else if (name == "decrypt_offset") decrypt_offset = std::stoull(value);
            else if (name == "key") key = value;
            else if (name == "fixed_block") fixed_block = value;
            else if (name == "random") random_on = value == "1";
            else if (name == "control") control = value == "1";
            else if (name == "probe") probe = std::stoll(value);
            else fail("unknown setting " + name);
        }
    }
};

// The testbench: reset, load the key, then one block at a time, each fixed or random.
struct Bench {
    const Netlist &net;
    Simulator sim;
    Config config;
    Rng rng;
    const Port &key_valid, &key_payload, &key_ready;
    const Port &in_valid, &in_payload, &in_ready;
    const Port &out_valid, &out_payload, &out_ready, &rst;
    const Port *rnd_valid, *rnd_payload, *rnd_ready;
    uint64_t cycle = 0;
    bool capture = false;        // keep the next output payload in `output`
    std::string output;
    // With config.probe >= 0: the settled values of the cycle before, and whether each counted
    // net (flip-flops, then cells) toggled in the probed cycle of the last block.
    std::vector<uint32_t> counted;
    std::vector<uint8_t> before, probed;
    int64_t block_cycle = -1;

    Bench(const Netlist &netlist, const Config &cfg)
        : net(netlist), sim(netlist), config(cfg), rng(cfg.seed),
          key_valid(net.port("key__valid")), key_payload(net.port("key__payload")),
          key_ready(net.port("key__ready")), in_valid(net.port("input__valid")),
          in_payload(net.port("input__payload")), in_ready(net.port("input__ready")),
          out_valid(net.port("output__valid")), out_payload(net.port("output__payload")),
          out_ready(net.port("output__ready")), rst(net.port("rst")),
          rnd_valid(net.optional_port("random__valid")),
          rnd_payload(net.optional_port("random__payload")),
          rnd_ready(net.optional_port("random__ready")) {
        if (rnd_valid) {
            sim.set(*rnd_valid, true);
            new_random();
        }
        for (const auto &ff : net.ffs) counted.push_back(ff.q);
        for (const auto &cell : net.cells) counted.push_back(cell.out);
        probed.assign(counted.size(), 0);
    }
    void new_random() {
        if (!rnd_payload) return;
        if (config.random_on) sim.set_random(*rnd_payload, rng);
        else for (uint32_t n : *rnd_payload) sim.v[n] = 0;
    }
    // One cycle: settle with the inputs as set, sample the handshakes, clock. Returns the power
    // sample of the cycle (flip-flop toggles at the edge into it plus cell toggles settling in
    // it), and the toggles split into flip-flops and cells.
    struct Sample { uint64_t ff, lut; };
    Sample step(bool &key_fire, bool &in_fire, bool &out_fire) {
        uint64_t ff = sim.ff_toggles;
        uint64_t lut = sim.settle();
        if (config.probe >= 0) {
            if (block_cycle == config.probe)
                for (size_t n = 0; n < counted.size(); n++)
                    probed[n] = sim.v[counted[n]] ^ before[counted[n]];
            before = sim.v;
        }
        key_fire = sim.get(key_valid) && sim.get(key_ready);
        in_fire = sim.get(in_valid) && sim.get(in_ready);
        out_fire = sim.get(out_valid) && sim.get(out_ready);
        bool rnd_fire = rnd_valid && sim.get(*rnd_valid) && sim.get(*rnd_ready);
        if (out_fire && capture) { output = hex_of(sim, out_payload); capture = false; }
        sim.edge();
        if (rnd_fire) new_random();
        cycle++;
        return {ff, lut};
    }
    void start() {
        bool k, i, o;
        sim.set(rst, true);
        for (int c = 0; c < config.reset_cycles; c++) step(k, i, o);
        sim.set(rst, false);
        sim.set(out_ready, true);
        sim.set(key_valid, true);
        sim.set_bits(key_payload, 0, parse_bits(config.key, key_payload.size()));
        uint64_t limit = cycle + config.max_cycles;
        do {
            step(k, i, o);
            if (cycle > limit) fail("the key was not taken");
        } while (!k);
        sim.set(key_valid, false);
    }
    // One block: put it, clock until its output transfers; the samples of each cycle from the
    // one the block is put in to the one its output transfers in go to `samples`.
    void block(bool fixed, const std::vector<uint8_t> &fixed_bits, std::vector<Sample> &samples) {
        samples.clear();
        sim.set(in_valid, true);
        if (fixed && !config.control) sim.set_bits(in_payload, config.block_offset, fixed_bits);
        else {
            std::vector<uint8_t> bits(config.block_bits);
            for (size_t i = 0; i < bits.size(); i += 64) {
                uint64_t word = rng.next();
                for (size_t j = i; j < bits.size() && j < i + 64; j++) bits[j] = (word >> (j - i)) & 1;
            }
            sim.set_bits(in_payload, config.block_offset, bits);
        }
        sim.v[in_payload[config.decrypt_offset]] = 0;
        bool k, i, o, put = false;
        for (uint64_t c = 0;; c++) {
            if (c > config.max_cycles) fail("no output within max_cycles");
            block_cycle = c;
            samples.push_back(step(k, i, o));
            if (i && !put) { put = true; sim.set(in_valid, false); }
            if (o) {
                if (!put) fail("an output before the block was put");
                return;
            }
        }
    }
};

int run(const char *netlist_path, const char *config_path) {
    Netlist netlist;
    netlist.read(netlist_path);
    Config config;
    config.read(config_path);
    Bench bench(netlist, config);
    std::vector<uint8_t> fixed_bits = parse_bits(config.fixed_block, config.block_bits);
    std::vector<Bench::Sample> samples;
    auto begin = std::chrono::steady_clock::now();
    bench.start();
    // Two blocks not recorded: whatever the key load leaves behind settles.
    bench.block(true, fixed_bits, samples);
    bench.block(false, fixed_bits, samples);
    size_t length = 0;
    std::vector<Moments> moments;   // [cycle][series][population]
    std::vector<Moments> net_moments;   // [counted net][population], with config.probe
    std::string fixed_output;
    for (uint64_t trace = 0; trace < config.traces; trace++) {
        bool fixed = bench.rng.next() & 1;
        bench.capture = fixed && !config.control && fixed_output.empty();
        bench.block(fixed, fixed_bits, samples);
        if (length == 0) {
            length = samples.size();
            moments.resize(length * 6);
        } else if (samples.size() != length) {
            fail("a block took " + std::to_string(samples.size()) + " cycles, another " +
                 std::to_string(length) + ": the core is not constant-time here");
        }
        if (fixed && fixed_output.empty()) fixed_output = bench.output;
        if (config.probe >= 0) {
            if (net_moments.empty()) net_moments.resize(2 * bench.counted.size());
            for (size_t n = 0; n < bench.counted.size(); n++)
                net_moments[2 * n + (fixed ? 0 : 1)].add(bench.probed[n]);
        }
        int population = fixed ? 0 : 1;
        for (size_t c = 0; c < length; c++) {
            double ff = samples[c].ff, lut = samples[c].lut;
            moments[(c * 3 + 0) * 2 + population].add(ff + lut);
            moments[(c * 3 + 1) * 2 + population].add(ff);
            moments[(c * 3 + 2) * 2 + population].add(lut);
        }
        if ((trace & 0x3ff) == 0x3ff) {
            std::fprintf(stderr, "P %" PRIu64 "\n", trace + 1);
            std::fflush(stderr);
        }
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
                         .count();
    std::printf("CYCLES %zu\nOUTPUT %s\n", length, fixed_output.empty() ? "-" :
                fixed_output.c_str());
    for (size_t c = 0; c < length; c++)
        for (int s = 0; s < 3; s++)
            for (int p = 0; p < 2; p++) {
                std::printf("M %zu %d %d ", c, s, p);
                print_moments(moments[(c * 3 + s) * 2 + p]);
                std::printf("\n");
            }
    for (size_t n = 0; n < net_moments.size() / 2; n++)
        for (int p = 0; p < 2; p++) {
            std::printf("N %u %d ", bench.counted[n], p);
            print_moments(net_moments[2 * n + p]);
            std::printf("\n");
        }
    std::printf("SECONDS %.6f\n", seconds);
    return 0;
}

// Run the netlist from its initial values for `count` cycles with every input at 0, printing the
// flip-flop and cell toggles of each cycle (as the power samples count them), for the tests.
int cycles(const char *netlist_path, uint64_t count) {
    Netlist netlist;
    netlist.read(netlist_path);
    Simulator sim(netlist);
    for (uint64_t c = 0; c < count; c++) {
        uint64_t ff = sim.ff_toggles, lut = sim.settle();
        std::printf("%" PRIu64 " %" PRIu64 "\n", ff, lut);
        sim.edge();
    }
    return 0;
}

int stats() {
    size_t count;
    if (!(std::cin >> count)) fail("--stats reads a count, then the samples");
    Moments m;
    for (size_t i = 0; i < count; i++) {
        double x;
        if (!(std::cin >> x)) fail("too few samples");
        m.add(x);
    }
    print_moments(m);
    std::printf("\n");
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::string(argv[1]) == "--stats") return stats();
    if (argc == 4 && std::string(argv[1]) == "--cycles")
        return cycles(argv[2], std::stoull(argv[3]));
    if (argc != 3) fail("usage: leakage NETLIST CONFIG | leakage --stats | "
                        "leakage --cycles NETLIST N");
    return run(argv[1], argv[2]);
}
