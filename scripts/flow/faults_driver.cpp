// Fault-injection campaign on a block-cipher core compiled by CXXRTL (scripts/flow/faults.py).
//
// The flip-flops are the design's wires that CXXRTL's debug information marks DRIVEN_SYNC
// (written by a clocked process; the model is built with `write_cxxrtl -g1`). Each run builds a
// fresh model (power-on values), loads a scenario's key, offers its blocks back to back with
// output.ready held high, and flips one bit of one flip-flop (chosen uniformly over all bits)
// just after a random edge within the first block's initiation interval: from the edge where
// block 0 transfers in to the edge before block 1 does, as a golden run of the scenario found.
// The flip is applied to both the current and the next value of the wire, so that it persists
// until the design writes that flip-flop again.
//
// Input (whitespace separated, payloads in hexadecimal):
//   FAULTS 1
//   <scenarios> <blocks> <faults> <seed> <max_edges>
//   per scenario: <key> then per block: <block> <decrypt 0|1> <expected result>
// Output:
//   FF <index> <width> <name>            each flip-flop
//   G <scenario> <first edge> <last edge> the window of flip edges
//   R <scenario> <ff> <bit> <edge> <class> <results released before the alert>
//   END <runs>
// where <class> is "detected" (alert high, no wrong result released), "harmless" (every result
// right, no alert), "silent" (a wrong or extra result released) or "stalled" (neither: results
// missing after max_edges edges).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "design.cc"

namespace {

using cxxrtl::chunk_t;
typedef std::vector<chunk_t> Word;

// A port of the top module seen as 32-bit chunks.
struct Pins {
    chunk_t *bits;
    size_t width;
    size_t size() const { return (width + 31) / 32; }
    bool high() const { return bits[0] & 1; }
    void drive(bool level) { bits[0] = level; }
    void put(const Word &word) { for (size_t i = 0; i < size(); i++) bits[i] = word[i]; }
    bool equals(const Word &word) const {
        for (size_t i = 0; i < size(); i++) if (bits[i] != word[i]) return false;
        return true;
    }
};

template<size_t N> Pins drive_pins(cxxrtl::value<N> &v) { return {v.data, N}; }
template<size_t N> Pins drive_pins(cxxrtl::wire<N> &w) { return {w.next.data, N}; }
template<size_t N> Pins sense_pins(cxxrtl::value<N> &v) { return {v.data, N}; }
template<size_t N> Pins sense_pins(cxxrtl::wire<N> &w) { return {w.curr.data, N}; }

[[noreturn]] void die(const std::string &why) {
    std::cerr << "fault campaign: " << why << std::endl;
    std::exit(2);
}

Word hex_word(const std::string &text, size_t width) {
    Word word((width + 31) / 32, 0);
    size_t at = 0;
    for (auto c = text.rbegin(); c != text.rend(); ++c, at += 4) {
        unsigned nibble = std::isdigit(*c) ? *c - '0' : (std::tolower(*c) - 'a' + 10);
        if (nibble > 15) die("not hexadecimal: " + text);
        if (nibble && at >= width) die("value wider than " + std::to_string(width) + " bits");
        if (nibble) word[at / 32] |= chunk_t(nibble) << (at % 32);
    }
    return word;
}

struct Block { Word payload, expected; };
struct Scenario { Word key; std::vector<Block> blocks; uint64_t first = 0, last = 0; };

// One flip-flop: its name and width (the same in every fresh model).
struct FlipFlop { std::string name; size_t width; };

// The flip-flop wires of a model, in the order of the debug table.
std::vector<cxxrtl::debug_item> flip_flop_items(cxxrtl_design::p_top &top,
                                                std::vector<FlipFlop> *names) {
    cxxrtl::debug_items items;
    top.debug_info(&items, nullptr, "");
    std::vector<cxxrtl::debug_item> found;
    for (auto &entry : items.table)
        for (auto &part : entry.second)
            if (part.type == cxxrtl::debug_item::WIRE &&
                    (part.flags & cxxrtl::debug_item::DRIVEN_SYNC)) {
                found.push_back(part);
                if (names) names->push_back({entry.first, part.width});
            }
    return found;
}

struct Outcome {
    const char *verdict;
    size_t released;            // results released (right ones) before the alert
    uint64_t first_in = 0, second_in = 0;
};

// One run of a scenario; with `ff` >= 0, bit `bit` of flip-flop `ff` flips after edge `when`.
Outcome run(const Scenario &scenario, uint64_t max_edges, long ff, size_t bit, uint64_t when) {
    std::unique_ptr<cxxrtl_design::p_top> top(new cxxrtl_design::p_top);
    Pins clk = drive_pins(top->p_clk), rst = drive_pins(top->p_rst);
    Pins key_valid = drive_pins(top->p_key____valid), key_payload = drive_pins(top->p_key____payload);
    Pins key_ready = sense_pins(top->p_key____ready);
    Pins in_valid = drive_pins(top->p_input____valid);
    Pins in_payload = drive_pins(top->p_input____payload);
    Pins in_ready = sense_pins(top->p_input____ready);
    Pins out_valid = sense_pins(top->p_output____valid);
    Pins out_payload = sense_pins(top->p_output____payload);
    Pins out_ready = drive_pins(top->p_output____ready);
#ifdef FAULT_HAS_RANDOM
    Pins random_valid = drive_pins(top->p_random____valid);
    random_valid.drive(true);       // all-zero randomness: the results do not depend on it
#endif
    std::vector<cxxrtl::debug_item> flops;
    if (ff >= 0) flops = flip_flop_items(*top, nullptr);

    rst.drive(false);
    out_ready.drive(true);
    key_valid.drive(true);
    key_payload.put(scenario.key);
    bool key_done = false;
    size_t offered = 0, received = 0;
    Outcome outcome{"stalled", 0};
    for (uint64_t edge = 1; edge <= max_edges; edge++) {
        clk.drive(false);
        top->step();
        bool key_moves = key_valid.high() && key_ready.high();
        bool block_moves = in_valid.high() && in_ready.high();
        bool result_moves = out_valid.high();
        bool right = result_moves && received < scenario.blocks.size() &&
                     out_payload.equals(scenario.blocks[received].expected);
        clk.drive(true);
        top->step();
        if (result_moves) {
            if (!right) { outcome.verdict = "silent"; outcome.released = received; return outcome; }
            received++;
        }
        if (key_moves) { key_done = true; key_valid.drive(false); }
        if (block_moves) {
            if (offered == 0) outcome.first_in = edge;
            if (offered == 1) outcome.second_in = edge;
            offered++;
            in_valid.drive(false);
        }
        if (key_done && offered < scenario.blocks.size() && !in_valid.high()) {
            in_valid.drive(true);
            in_payload.put(scenario.blocks[offered].payload);
        }
        if (ff >= 0 && edge == when) {
            cxxrtl::debug_item &item = flops[ff];
            chunk_t mask = chunk_t(1) << (bit % 32);
            item.curr[bit / 32] ^= mask;
            if (item.next && item.next != item.curr) item.next[bit / 32] ^= mask;
        }
#ifdef FAULT_HAS_ALERT
        if (sense_pins(top->p_alert).high()) {
            outcome.verdict = "detected";
            outcome.released = received;
            return outcome;
        }
#endif
        if (received == scenario.blocks.size()) {
            outcome.verdict = "harmless";
            outcome.released = received;
            return outcome;
        }
    }
    outcome.released = received;
    return outcome;
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::string magic;
    unsigned version = 0;
    size_t n_scenarios = 0, n_blocks = 0, n_faults = 0;
    uint64_t seed = 0, max_edges = 0;
    std::cin >> magic >> version >> n_scenarios >> n_blocks >> n_faults >> seed >> max_edges;
    if (!std::cin || magic != "FAULTS" || version != 1) die("input does not start with FAULTS 1");
    if (n_scenarios == 0 || n_blocks < 2) die("need a scenario and at least two blocks");

    size_t key_bits, input_bits, output_bits;
    {
        cxxrtl_design::p_top probe;
        key_bits = drive_pins(probe.p_key____payload).width;
        input_bits = drive_pins(probe.p_input____payload).width;
        output_bits = sense_pins(probe.p_output____payload).width;
    }
    std::vector<Scenario> scenarios(n_scenarios);
    for (Scenario &scenario : scenarios) {
        std::string key;
        std::cin >> key;
        scenario.key = hex_word(key, key_bits);
        for (size_t i = 0; i < n_blocks; i++) {
            std::string payload, expected;
            std::cin >> payload >> expected;
            if (!std::cin) die("scenario list ends early");
            scenario.blocks.push_back({hex_word(payload, input_bits),
                                       hex_word(expected, output_bits)});
        }
    }

    std::vector<FlipFlop> flip_flops;
    std::vector<size_t> first_bit;      // the campaign's bit numbering: flip-flop by flip-flop
    size_t total_bits = 0;
    {
        cxxrtl_design::p_top probe;
        flip_flop_items(probe, &flip_flops);
    }
    if (flip_flops.empty()) die("no flip-flops found (was the model built with -g1?)");
    for (size_t i = 0; i < flip_flops.size(); i++) {
        first_bit.push_back(total_bits);
        total_bits += flip_flops[i].width;
        std::printf("FF %zu %zu %s\n", i, flip_flops[i].width, flip_flops[i].name.c_str());
    }

    for (size_t s = 0; s < n_scenarios; s++) {
        Outcome golden = run(scenarios[s], max_edges, -1, 0, 0);
        if (std::string(golden.verdict) != "harmless")
            die("scenario " + std::to_string(s) + " without a fault ends " + golden.verdict);
        scenarios[s].first = golden.first_in;
        scenarios[s].last = golden.second_in - 1;
        std::printf("G %zu %llu %llu\n", s, (unsigned long long)scenarios[s].first,
                    (unsigned long long)scenarios[s].last);
    }

    std::mt19937_64 rng(seed);
    for (size_t f = 0; f < n_faults; f++) {
        size_t s = std::uniform_int_distribution<size_t>(0, n_scenarios - 1)(rng);
        size_t flat = std::uniform_int_distribution<size_t>(0, total_bits - 1)(rng);
        size_t ff = std::upper_bound(first_bit.begin(), first_bit.end(), flat) - first_bit.begin()
                    - 1;
        size_t bit = flat - first_bit[ff];
        uint64_t when = std::uniform_int_distribution<uint64_t>(scenarios[s].first,
                                                                scenarios[s].last)(rng);
        Outcome outcome = run(scenarios[s], max_edges, long(ff), bit, when);
        std::printf("R %zu %zu %zu %llu %s %zu\n", s, ff, bit, (unsigned long long)when,
                    outcome.verdict, outcome.released);
    }
    std::printf("END %zu\n", n_faults);
    return 0;
}
