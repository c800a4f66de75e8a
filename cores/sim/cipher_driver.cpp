// Stream-level driver for a block-cipher core compiled by CXXRTL (see cores/sim/cxxrtl.py).
// Reads operations and schedules on stdin, simulates, and writes transfer logs on stdout.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "design.cc"

namespace {

using cxxrtl::chunk_t;
typedef std::vector<chunk_t> Bits;

// A port of the top module as 32-bit chunks: inputs are written, outputs read.
struct Port {
    chunk_t *data;
    size_t width;
    size_t chunks() const { return (width + 31) / 32; }
    bool bit0() const { return data[0] & 1; }
    void set_bit0(bool value) { data[0] = value ? 1 : 0; }
    void write(const Bits &value) { for (size_t i = 0; i < chunks(); i++) data[i] = value[i]; }
    void read(Bits &value) const { value.assign(data, data + chunks()); }
};

// An input port is a `value` (written directly) or a `wire` (written to `next`, committed by
// step()); an output port is a `value` or a `wire` (read from `curr`).
template<size_t N> Port input_port(cxxrtl::value<N> &v) { return {v.data, N}; }
template<size_t N> Port input_port(cxxrtl::wire<N> &w) { return {w.next.data, N}; }
template<size_t N> Port output_port(cxxrtl::value<N> &v) { return {v.data, N}; }
template<size_t N> Port output_port(cxxrtl::wire<N> &w) { return {w.curr.data, N}; }

[[noreturn]] void fail(const std::string &message) {
    std::cerr << "cipher driver: " << message << std::endl;
    std::exit(2);
}

Bits parse_hex(const std::string &text, size_t width) {
    Bits value((width + 31) / 32, 0);
    size_t bit = 0;
    for (size_t i = text.size(); i-- > 0; bit += 4) {
        char c = text[i];
        unsigned digit;
        if (c >= '0' && c <= '9') digit = c - '0';
        else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
        else fail("bad hexadecimal payload: " + text);
        if (digit == 0) continue;
        if (bit >= width || (digit >> (width - bit < 4 ? width - bit : 4)) != 0)
            fail("payload " + text + " is wider than " + std::to_string(width) + " bits");
        value[bit / 32] |= chunk_t(digit) << (bit % 32);
    }
    return value;
}

void append_hex(std::string &out, const Bits &value) {
    static const char digits[] = "0123456789abcdef";
    bool started = false;
    for (size_t i = value.size(); i-- > 0;) {
        for (int shift = 28; shift >= 0; shift -= 4) {
            unsigned digit = (value[i] >> shift) & 15;
            if (digit || started) { out += digits[digit]; started = true; }
        }
    }
    if (!started) out += '0';
}

// The rules of cipher_cores.cores.sim.stream_monitor, on values sampled just before each edge.
struct Monitor {
    const char *name;
    Port valid, ready, payload;
    bool valid_now = false, ready_now = false;
    bool pending = false;
    Bits pending_value, value;
    Bits previous[2];   // the last output transferred, and the one before it
    size_t transfers = 0;
    std::string log;

    void sample() {
        valid_now = valid.bit0();
        ready_now = ready.bit0();
        if (valid_now) payload.read(value);
    }

    void observe(uint64_t edge, bool rst) {
        if (rst) { pending = false; return; }
        if (pending && (!valid_now || value != pending_value)) {
            log += "V "; log += name; log += ' '; log += std::to_string(edge); log += '\n';
        }
        if (valid_now && ready_now) {
            log += "T "; log += name; log += ' '; log += std::to_string(edge); log += ' ';
            append_hex(log, value);
            log += '\n';
            previous[1] = previous[0];
            previous[0] = value;
            transfers++;
            pending = false;
        } else if (valid_now) {
            pending = true;
            pending_value = value;
        } else {
            pending = false;
        }
    }
};

struct Operation {
    int stream;     // 0: key, 1: input
    int chain;      // input only: 0, or 1 (2) to OR the last (second-to-last) output's
                    // low chain_bits into the payload's low bits
    uint64_t gap;
    Bits payload;
};

// stream_put for each operation in turn. A chained operation, after its gap, waits until the
// output of every earlier block has transferred, and puts its payload with the low chain_bits
// (the block field) of the last or second-to-last output ORed into its low bits.
struct Producer {
    std::vector<Operation> operations;
    size_t chain_bits = 0;
    Port *valid[2], *payload[2];
    const Monitor *monitor[3];
    size_t index = 0, blocks_put = 0;
    enum { GAP, RESULT, WAIT, DONE } state = DONE;
    uint64_t count = 0;

    void begin() {
        if (index == operations.size()) { state = DONE; return; }
        if (operations[index].gap) { state = GAP; count = operations[index].gap; }
        else ready_to_put();
    }
    void ready_to_put() {
        if (operations[index].chain && monitor[2]->transfers < blocks_put) state = RESULT;
        else put();
    }
    void put() {
        const Operation &op = operations[index];
        Bits value = op.payload;
        if (op.chain) {
            const Bits &source = monitor[2]->previous[op.chain - 1];
            for (size_t i = 0; i < source.size() && i < value.size() && 32 * i < chain_bits;
                 i++) {
                size_t left = chain_bits - 32 * i;
                chunk_t mask = left >= 32 ? ~chunk_t(0) : (chunk_t(1) << left) - 1;
                value[i] |= source[i] & mask;
            }
        }
        valid[op.stream]->set_bit0(true);
        payload[op.stream]->write(value);
        if (op.stream == 1) blocks_put++;
        state = WAIT;
    }
    void after_edge() {
        if (state == GAP) {
            if (--count == 0) ready_to_put();
        } else if (state == RESULT) {
            if (monitor[2]->transfers >= blocks_put) put();
        } else if (state == WAIT) {
            int stream = operations[index].stream;
            if (monitor[stream]->ready_now) {
                valid[stream]->set_bit0(false);
                index++;
                begin();
            }
        }
    }
};

// stream_get for each block with its stall, or output.ready held high without a schedule.
struct Consumer {
    bool stall_mode = false;
    std::vector<uint64_t> stalls;
    size_t blocks = 0, index = 0;
    Port *ready = nullptr;
    const Monitor *monitor = nullptr;
    enum { STALL, WAIT, FINAL, DONE } state = DONE;
    uint64_t count = 0;

    void begin() {
        if (!stall_mode) {
            ready->set_bit0(true);
            state = blocks ? WAIT : DONE;
        } else {
            next_block();
        }
    }
    void next_block() {
        if (index == stalls.size()) { state = FINAL; return; }
        if (stalls[index]) { ready->set_bit0(false); state = STALL; count = stalls[index]; }
        else { ready->set_bit0(true); state = WAIT; }
    }
    void after_edge() {
        if (!stall_mode) {
            if (monitor->transfers >= blocks) state = DONE;
        } else if (state == STALL) {
            if (--count == 0) { ready->set_bit0(true); state = WAIT; }
        } else if (state == WAIT) {
            if (monitor->valid_now) { ready->set_bit0(false); index++; next_block(); }
        } else if (state == FINAL) {
            state = DONE;
        }
    }
};

#ifdef CIPHER_RANDOM
// The source on a masked core's `random` stream: `valid` held high, a fresh xorshift64* word
// after each transfer (the core's results do not depend on it).
struct RandomSource {
    Port valid, ready, payload;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    bool ready_now = false;

    uint64_t next() {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27;
        return state * 0x2545F4914F6CDD1Dull;
    }
    void fill() {
        Bits value(payload.chunks());
        for (size_t i = 0; i < value.size(); i++) value[i] = chunk_t(next());
        if (payload.width % 32) value.back() &= (chunk_t(1) << (payload.width % 32)) - 1;
        payload.write(value);
    }
    void begin() { valid.set_bit0(true); fill(); }
    void sample() { ready_now = ready.bit0(); }
    void after_edge() { if (ready_now) fill(); }
};
#endif

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);
    std::string magic;
    unsigned version = 0;
    uint64_t max_edges = 0;
    int stall_mode = 0;
    size_t n_operations = 0, n_stalls = 0, chain_bits = 0;
    std::cin >> magic >> version >> max_edges >> stall_mode >> n_operations >> n_stalls
             >> chain_bits;
    if (!std::cin || magic != "CIPHERSIM" || version != 2)
        fail("input does not start with a CIPHERSIM 2 header");

    cxxrtl_design::p_top top;
    Port clk = input_port(top.p_clk), rst = input_port(top.p_rst);
    Port key_valid = input_port(top.p_key____valid);
    Port key_payload = input_port(top.p_key____payload);
    Port input_valid = input_port(top.p_input____valid);
    Port input_payload = input_port(top.p_input____payload);
    Port output_ready = input_port(top.p_output____ready);
    Monitor monitors[3] = {
        {"key", key_valid, output_port(top.p_key____ready), key_payload},
        {"input", input_valid, output_port(top.p_input____ready), input_payload},
        {"output", output_port(top.p_output____valid), output_ready,
         output_port(top.p_output____payload)},
    };

#ifdef CIPHER_RANDOM
    RandomSource random_source{input_port(top.p_random____valid),
                               output_port(top.p_random____ready),
                               input_port(top.p_random____payload)};
#define CIPHER_RANDOM_DO(call) random_source.call
#else
#define CIPHER_RANDOM_DO(call) (void)0
#endif

    Producer producer;
    producer.chain_bits = chain_bits;
    producer.valid[0] = &key_valid; producer.payload[0] = &key_payload;
    producer.valid[1] = &input_valid; producer.payload[1] = &input_payload;
    for (int i = 0; i < 3; i++) producer.monitor[i] = &monitors[i];
    Consumer consumer;
    consumer.stall_mode = stall_mode != 0;
    consumer.ready = &output_ready;
    consumer.monitor = &monitors[2];

    for (size_t i = 0; i < n_operations; i++) {
        std::string kind, hex;
        uint64_t gap;
        if (!(std::cin >> kind >> gap >> hex)) fail("operation list ends early");
        int chain = kind == "chain" ? 1 : kind == "chain2" ? 2 : 0;
        int stream = kind == "key" ? 0 : kind == "input" || chain ? 1 : -1;
        if (stream < 0) fail("unknown operation " + kind);
        producer.operations.push_back(
            {stream, chain, gap, parse_hex(hex, producer.payload[stream]->width)});
        if (stream == 1) consumer.blocks++;
    }
    for (size_t i = 0; i < n_stalls; i++) {
        uint64_t stall;
        if (!(std::cin >> stall)) fail("stall list ends early");
        consumer.stalls.push_back(stall);
    }
    if (consumer.stall_mode && consumer.stalls.size() != consumer.blocks)
        fail("need one stall per block");

    // Time 0, before the first edge: the testbenches start.
    rst.set_bit0(false);
    clk.set_bit0(false);
    producer.begin();
    consumer.begin();
    CIPHER_RANDOM_DO(begin());

    uint64_t edge = 0;
    bool timeout = false;
    while (producer.state != Producer::DONE || consumer.state != Consumer::DONE) {
        if (edge == max_edges) { timeout = true; break; }
        edge++;
#ifdef CIPHER_SETTLE_BEFORE_EDGE
        // With feedback wires the design needs delta cycles: settle with the clock low, sample,
        // then raise the clock (two evaluations or more per edge).
        clk.set_bit0(false);
        top.step();
        for (Monitor &monitor : monitors) monitor.sample();
        CIPHER_RANDOM_DO(sample());
        clk.set_bit0(true);
        top.step();
#else
        // A flattened design without feedback settles in one evaluation: with the clock
        // rising, eval() computes the outputs from the state before the edge and the new
        // inputs (the pre-edge sample) along with the next state, which commit() then applies.
        // A commit with the clock low first makes the next eval() see a rising edge.
        clk.set_bit0(false);
        top.commit();
        clk.set_bit0(true);
        if (!top.eval())
            fail("the design did not settle in one evaluation; rebuild with "
                 "-DCIPHER_SETTLE_BEFORE_EDGE");
        for (Monitor &monitor : monitors) monitor.sample();
        CIPHER_RANDOM_DO(sample());
        top.commit();
#endif
        for (Monitor &monitor : monitors) monitor.observe(edge, false);
        producer.after_edge();
        consumer.after_edge();
        CIPHER_RANDOM_DO(after_edge());
    }

    for (const Monitor &monitor : monitors)
        std::fwrite(monitor.log.data(), 1, monitor.log.size(), stdout);
    std::printf("END %s %llu\n", timeout ? "timeout" : "ok", (unsigned long long)edge);
    return 0;
}
