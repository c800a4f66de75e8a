// A small iterative block cipher written for the tests of `cipher-cores report --cores
// verilog:FILE.toml`: it stands in for another project's core. Not a secure cipher.
//
// 32-bit blocks, a 32-bit key, 16 Feistel rounds, one round per clock. `start` loads `key` and
// `block_in` when the core is idle; `done` is high for one clock with `block_out` 17 clocks
// after `start`. `rst_n` is active low and synchronous.
module toy_feistel (
    input  wire        clk,
    input  wire        rst_n,
    input  wire        start,
    input  wire [31:0] key,
    input  wire [31:0] block_in,
    output reg         done,
    output wire [31:0] block_out
);
    reg [15:0] left, right;
    reg [31:0] round_key;
    reg [4:0]  round;
    reg        busy;

    wire [15:0] mixed = {right[10:0], right[15:11]} ^ (right + round_key[15:0]);

    assign block_out = {left, right};

    always @(posedge clk) begin
        done <= 1'b0;
        if (!rst_n) begin
            busy  <= 1'b0;
            round <= 5'd0;
        end else if (!busy) begin
            if (start) begin
                {left, right} <= block_in;
                round_key     <= key;
                round         <= 5'd0;
                busy          <= 1'b1;
            end
        end else begin
            left      <= right;
            right     <= left ^ mixed;
            round_key <= {round_key[26:0], round_key[31:27]} ^ {27'd0, round};
            round     <= round + 5'd1;
            if (round == 5'd15) begin
                busy <= 1'b0;
                done <= 1'b1;
            end
        end
    end
endmodule
