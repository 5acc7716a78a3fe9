// rlx_fpga.sv — the hardware blocks of RLX's FPGA programs, written by `rlx export --target fpga…`
// beside model.sv, which instantiates them with one model's sizes, parameters and weight files.
// Plain synthesizable SystemVerilog for yosys (synth_ice40, synth) and Verilator: no vendor
// primitives — yosys maps the memories to EBR or SPRAM and the 8×8 products to SB_MAC16 itself.
// Every block computes the integers of the graph's ops exactly (the host's int8 reference).
`default_nettype none

// A layer's input: written a byte at a time, read P bytes a cycle (one cycle after the address).
// P byte-wide banks: byte i lives in bank i mod P at word i / P (P a power of two).
module rlx_buffer #(
    parameter integer P = 4,
    parameter integer WORDS = 1
) (
    input  wire              clk,
    input  wire              we,
    input  wire [15:0]       waddr,
    input  wire [7:0]        wdata,
    input  wire [15:0]       raddr,
    output logic [8*P-1:0]   rdata
);
  genvar b;
  generate
    for (b = 0; b < P; b = b + 1) begin : bank
      logic [7:0] mem[0:WORDS-1];
      always_ff @(posedge clk) begin
        if (we && (waddr % P) == b) mem[waddr/P] <= wdata;
        rdata[8*b+:8] <= mem[raddr];
      end
    end
  endgenerate
endmodule

// The graph's requantize of one accumulator:
//   y = clamp(ZP + ⌊(acc·mult + 2^(shift−1)) / 2^shift⌋, LO, HI)
// exact, in few LUTs and no DSP. The product is a shift-and-add multiply that keeps the partial
// sum in the top half of p and shifts it right (32 cycles, a 33-bit adder: a short carry chain).
// Then, with q = ⌊p / 2^(shift−1)⌋ (shifts of four bits, then of one), the result is
// ZP + ⌊(q + 1) / 2⌋ = ⌊(q + 1 + 2·ZP) / 2⌋ — one add and one shift (shift 0: q = 2p) — then the
// clamp: saturate to int8 (a value fits when its bits above 7 are all equal), clamp those eight
// bits to [LO, HI] (LO ≥ −128, HI ≤ 127), a step each. 38–56 cycles; the layer overlaps it with
// the next row.
module rlx_requant #(
    parameter integer ZP = 0,
    parameter integer LO = -128,
    parameter integer HI = 127
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               start,     // taken when !busy
    input  wire signed [31:0] acc,
    input  wire [31:0]        mult,
    input  wire [5:0]         shift,
    input  wire [15:0]        tag_in,    // the output's index, handed back with y
    output logic              busy,
    output logic              valid,     // a pulse: y and tag are the result
    output logic signed [7:0] y,
    output logic [15:0]       tag
);
  localparam [2:0] MUL = 0, PRE = 1, DOUBLE = 2, CLIP = 3, ADD = 4, SATURATE = 5, CLAMP = 6;
  localparam signed [16:0] ROUND = 17'sd1 + 17'sd2 * 17'(signed'(ZP));
  logic signed [63:0] p;
  logic signed [31:0] a;
  logic [31:0] m;
  logic [5:0] s, steps;
  logic [2:0] phase;
  wire signed [32:0] top = 33'($signed(p[63:32])) + (m[0] ? 33'(a) : 33'sd0);
  // q clipped to ±2^14 first, which changes no result (beyond that it saturates either way), so
  // that the add is 17 bits wide rather than 64
  logic signed [16:0] r;
  wire fits15 = p[63:15] == '0 || p[63:15] == '1;
  wire fits7 = r[16:7] == '0 || r[16:7] == '1;
  wire signed [7:0] sat = fits7 ? r[7:0] : r[16] ? -8'sd128 : 8'sd127;
  always_ff @(posedge clk) begin
    valid <= 1'b0;
    if (rst) begin
      busy <= 1'b0;
    end else if (!busy) begin
      if (start) begin
        busy <= 1'b1;
        p <= 64'sd0;
        a <= acc;
        m <= mult;
        s <= shift;
        tag <= tag_in;
        steps <= 6'd0;
        phase <= MUL;
      end
    end else begin
      case (phase)
        MUL: begin  // p = (p + m[0]·a·2^32) / 2, exactly: the bits shifted out are zeros
          p <= {top, p[31:1]};
          m <= m >> 1;
          steps <= steps + 6'd1;
          if (steps == 6'd31) phase <= s == 6'd0 ? DOUBLE : PRE;
        end
        PRE:  // s − 1 shifts right
        if (s > 6'd4) begin
          p <= p >>> 4;
          s <= s - 6'd4;
        end else if (s > 6'd1) begin
          p <= p >>> 1;
          s <= s - 6'd1;
        end else phase <= CLIP;
        DOUBLE: begin
          p <= p <<< 1;
          phase <= CLIP;
        end
        CLIP: begin
          r <= fits15 ? 17'($signed(p[15:0])) : p[63] ? -17'sd16384 : 17'sd16384;
          phase <= ADD;
        end
        ADD: begin
          r <= (r + ROUND) >>> 1;
          phase <= SATURATE;
        end
        SATURATE: begin
          y <= sat;
          phase <= CLAMP;
        end
        default: begin
          y <= y < 8'(signed'(LO)) ? 8'(LO) : y > 8'(signed'(HI)) ? 8'(HI) : y;
          valid <= 1'b1;
          busy <= 1'b0;
        end
      endcase
    end
  end
endmodule

// The tail that rlx_fc and rlx_conv share: a cycle's product sum registered (stage 2), then
// accumulated in int32 (an output's first sum starts from the bias, q[69:38]), the finished
// accumulator held until the requantizer is free, then requantized with its multiplier and shift
// (q[37:6], q[5:0]) — so requantization overlaps the next output's products. pending: a sum is
// in stage 2 or held; busy: the requantizer works, or takes the held sum now.
module rlx_acc_requant #(
    parameter integer ZP = 0,
    parameter integer LO = -128,
    parameter integer HI = 127
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               in_valid,
    input  wire               in_first,
    input  wire               in_last,
    input  wire [15:0]        in_j,      // the output's index
    input  wire signed [31:0] in_sum,
    input  wire [69:0]        in_q,      // {bias, mult, shift} of the output
    output wire               pending,
    output wire               busy,
    output wire               y_we,
    output wire [15:0]        y_addr,
    output wire [7:0]         y_data
);
  logic s2_valid, s2_first, s2_last, holding;
  logic [15:0] s2_j;
  logic signed [31:0] s2_sum;
  logic [69:0] s2_q;
  assign pending = s2_valid || holding;
  logic signed [31:0] acc, hold_acc;
  wire signed [31:0] acc_next = (s2_first ? $signed(s2_q[69:38]) : acc) + s2_sum;
  logic [37:0] hold_q;
  logic [15:0] hold_j;
  logic rq_busy, rq_valid;
  logic signed [7:0] rq_y;
  wire rq_start = holding && !rq_busy;
  assign busy = rq_busy || rq_start;
  rlx_requant #(.ZP(ZP), .LO(LO), .HI(HI)) requant (
      .clk(clk), .rst(rst), .start(rq_start), .acc(hold_acc), .mult(hold_q[37:6]), .shift(hold_q[5:0]), .tag_in(hold_j),
      .busy(rq_busy), .valid(rq_valid), .y(rq_y), .tag(y_addr));
  assign y_we = rq_valid;
  assign y_data = rq_y;
  always_ff @(posedge clk) begin
    s2_valid <= in_valid;
    s2_first <= in_first;
    s2_last <= in_last;
    s2_j <= in_j;
    s2_sum <= in_sum;
    s2_q <= in_q;
    if (s2_valid) acc <= acc_next;
    if (rq_start) holding <= 1'b0;
    if (s2_valid && s2_last) begin
      holding <= 1'b1;
      hold_acc <= acc_next;
      hold_q <= s2_q[37:0];
      hold_j <= s2_j;
    end
    if (rst) begin
      s2_valid <= 1'b0;
      holding <= 1'b0;
    end
  end
endmodule

// A fully connected int8 layer: y[j] = requantize(bias[j] + Σ_k x[k]·w[j, k]) for j < N, P
// products a cycle. Weights are words of P bytes, row j at words j·T … j·T + T − 1 (the row padded
// with zeros to T·P); a ROM initialized from W_INIT, or (LOADABLE) a single-port RAM written
// through cfg_* before the first run — yosys makes that SPRAM, which a bitstream cannot
// initialize. Q_INIT holds {bias[31:0], mult[31:0], shift[5:0]} per output.
// Pipeline: addresses → memory words → P products summed → accumulate; at a row's end the sum
// waits in `hold` until the requantizer is free, and the next row starts once it has been taken.
module rlx_fc #(
    parameter integer K = 16,
    parameter integer N = 4,
    parameter integer P = 4,
    parameter integer LOADABLE = 0,
    parameter W_INIT = "",
    parameter Q_INIT = "",
    parameter integer ZP = 0,
    parameter integer LO = -128,
    parameter integer HI = 127
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             start,    // a pulse: the input is in place
    output logic            done,     // a pulse: every output written
    output logic [15:0]     x_addr,
    input  wire [8*P-1:0]   x_word,   // the input word at x_addr, a cycle later
    output logic            y_we,
    output logic [15:0]     y_addr,
    output logic [7:0]      y_data,
    input  wire             cfg_we,
    input  wire [15:0]      cfg_addr,
    input  wire [8*P-1:0]   cfg_word
);
  localparam integer T = (K + P - 1) / P;
  localparam [1:0] IDLE = 0, ISSUE = 1, WAIT = 2, FINISH = 3;

  logic [1:0] state;
  logic [15:0] j, t, w_addr;
  logic [8*P-1:0] w_word;
  logic [69:0] q_word;
  logic [69:0] qmem[0:N-1];
  generate
    if (Q_INIT != "") begin : q_rom  // (the unparameterized module has no file)
      initial $readmemh(Q_INIT, qmem);
    end
  endgenerate
  always_ff @(posedge clk) q_word <= qmem[j];

  generate
    if (LOADABLE != 0) begin : ram
      logic [8*P-1:0] mem[0:N*T-1];
      wire [15:0] a = cfg_we ? cfg_addr : w_addr;
      always_ff @(posedge clk)  // the read holds while writing: SPRAM's "no change" port
        if (cfg_we) mem[a] <= cfg_word;
        else w_word <= mem[a];
    end else begin : rom
      logic [8*P-1:0] mem[0:N*T-1];
      if (W_INIT != "") begin : init
        initial $readmemh(W_INIT, mem);
      end
      always_ff @(posedge clk) w_word <= mem[w_addr];
    end
  endgenerate

  assign x_addr = t;

  // stage 1: the words of the address issued last cycle
  logic s1_valid, s1_first, s1_last;
  logic [15:0] s1_j;
  // stage 2: their products summed
  logic [16*P-1:0] prods;
  genvar b;
  generate
    for (b = 0; b < P; b = b + 1) begin : mac
      assign prods[16*b+:16] = $signed(x_word[8*b+:8]) * $signed(w_word[8*b+:8]);
    end
  endgenerate
  logic signed [31:0] psum;
  integer i;
  always_comb begin
    psum = 32'sd0;
    for (i = 0; i < P; i = i + 1) psum = psum + 32'($signed(prods[16*i+:16]));
  end
  // stages 2 and 3: the sum registered, the accumulator; a finished output waits for the requantizer
  logic pending, rq_busy;
  rlx_acc_requant #(.ZP(ZP), .LO(LO), .HI(HI)) tail (
      .clk(clk), .rst(rst), .in_valid(s1_valid), .in_first(s1_first), .in_last(s1_last), .in_j(s1_j), .in_sum(psum), .in_q(q_word),
      .pending(pending), .busy(rq_busy), .y_we(y_we), .y_addr(y_addr), .y_data(y_data));
  wire drained = !s1_valid && !pending;
  always_ff @(posedge clk) begin
    done <= 1'b0;
    s1_valid <= state == ISSUE;
    s1_first <= t == 16'd0;
    s1_last <= t == 16'(T - 1);
    s1_j <= j;
    if (rst) begin
      state <= IDLE;
      s1_valid <= 1'b0;
    end else begin
      case (state)
        IDLE:
        if (start) begin
          j <= 16'd0;
          t <= 16'd0;
          w_addr <= 16'd0;
          state <= ISSUE;
        end
        ISSUE: begin
          w_addr <= w_addr + 16'd1;
          if (t == 16'(T - 1)) begin
            t <= 16'd0;
            state <= WAIT;
          end else t <= t + 16'd1;
        end
        WAIT:
        if (drained) begin
          if (j == 16'(N - 1)) state <= FINISH;
          else begin
            j <= j + 16'd1;
            state <= ISSUE;
          end
        end
        default:
        if (drained && !rq_busy) begin
          done <= 1'b1;
          state <= IDLE;
        end
      endcase
    end
  end
endmodule

// A 2-D int8 convolution (NCHW, one image): y[co, oy, ox] = requantize(bias[co] +
// Σ x[g·CPG + ci, oy·SH − PT + ky·DH, ox·SW − PL + kx·DW]·w[co, ci, ky, kx]) over ci < CPG (the
// input channels of co's group g), ky < KH, kx < KW; taps outside the image read PAD (the input's
// zero point). One product a cycle in rlx_fc's pipeline (address → words → product → accumulate,
// the requantizer overlapped with the next output); the input address is built from counters
// that step by additions only (no multiplier spent on addressing), the weights read in their
// stored order [co][ci][ky][kx]. Outputs are written in NCHW order, index j = (co·OH + oy)·OW + ox.
module rlx_conv #(
    parameter integer CIN = 1, H = 8, W = 8, COUT = 1, KH = 3, KW = 3, OH = 6, OW = 6,
    parameter integer SH = 1, SW = 1, DH = 1, DW = 1, PT = 0, PL = 0, GROUPS = 1,
    parameter integer PAD = 0,
    parameter W_INIT = "",
    parameter Q_INIT = "",
    parameter integer ZP = 0,
    parameter integer LO = -128,
    parameter integer HI = 127
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             start,
    output logic            done,
    output logic [15:0]     x_addr,
    input  wire [7:0]       x_word,
    output logic            y_we,
    output logic [15:0]     y_addr,
    output logic [7:0]      y_data
);
  localparam integer CPG = CIN / GROUPS, OPG = COUT / GROUPS, K = CPG * KH * KW;
  localparam [2:0] IDLE = 0, SETUP = 1, ISSUE = 2, WAIT = 3, FINISH = 4;
  logic [2:0] state;
  // the output: channel co (go its index in its group), row oy, column ox, index j
  logic [15:0] co, go, oy, ox, j, wbase;
  logic signed [19:0] gbase, y0, y0row, x0;  // the group's first plane; oy·SH − PT, times W; ox·SW − PL
  // the tap: ci, ky, kx, and the address parts they step
  logic [15:0] ci, ky, kx, t, w_addr;
  logic signed [19:0] cbase, iy, ix;   // plane of channel g·CPG + ci; iy = y0 + ky·DH; ix = x0 + kx·DW
  wire in_plane = iy >= 0 && iy < H && ix >= 0 && ix < W;
  logic signed [19:0] row;             // iy·W, stepped with iy
  assign x_addr = 16'(cbase + row + ix);

  logic [7:0] w_word;
  logic [7:0] wmem[0:COUT*K-1];
  logic [69:0] q_word;
  logic [69:0] qmem[0:COUT-1];
  generate
    if (W_INIT != "") begin : w_rom
      initial $readmemh(W_INIT, wmem);
    end
    if (Q_INIT != "") begin : q_rom
      initial $readmemh(Q_INIT, qmem);
    end
  endgenerate
  always_ff @(posedge clk) begin
    w_word <= wmem[w_addr];
    q_word <= qmem[co];
  end

  logic s1_valid, s1_first, s1_last, s1_inside;
  logic [15:0] s1_j;
  wire signed [15:0] prod = (s1_inside ? $signed(x_word) : 8'(signed'(PAD))) * $signed(w_word);
  // stages 2 and 3: the sum registered, the accumulator; a finished output waits for the requantizer
  logic pending, rq_busy;
  rlx_acc_requant #(.ZP(ZP), .LO(LO), .HI(HI)) tail (
      .clk(clk), .rst(rst), .in_valid(s1_valid), .in_first(s1_first), .in_last(s1_last), .in_j(s1_j), .in_sum(32'(prod)), .in_q(q_word),
      .pending(pending), .busy(rq_busy), .y_we(y_we), .y_addr(y_addr), .y_data(y_data));
  wire drained = !s1_valid && !pending;

  always_ff @(posedge clk) begin
    done <= 1'b0;
    s1_valid <= state == ISSUE;
    s1_first <= t == 16'd0;
    s1_last <= t == 16'(K - 1);
    s1_inside <= in_plane;
    s1_j <= j;
    if (rst) begin
      state <= IDLE;
      s1_valid <= 1'b0;
    end else begin
      case (state)
        IDLE:
        if (start) begin
          co <= 16'd0; go <= 16'd0; oy <= 16'd0; ox <= 16'd0; j <= 16'd0; wbase <= 16'd0;
          gbase <= 20'sd0; y0 <= -20'sd1 * 20'(PT); y0row <= -20'sd1 * 20'(PT * W); x0 <= -20'sd1 * 20'(PL);
          state <= SETUP;
        end
        SETUP: begin  // the output's first tap
          ci <= 16'd0; ky <= 16'd0; kx <= 16'd0; t <= 16'd0; w_addr <= wbase;
          cbase <= gbase; iy <= y0; row <= y0row; ix <= x0;
          state <= ISSUE;
        end
        ISSUE: begin
          w_addr <= w_addr + 16'd1;
          t <= t + 16'd1;
          if (kx != 16'(KW - 1)) begin
            kx <= kx + 16'd1;
            ix <= ix + 20'(DW);
          end else begin
            kx <= 16'd0;
            ix <= x0;
            if (ky != 16'(KH - 1)) begin
              ky <= ky + 16'd1;
              iy <= iy + 20'(DH);
              row <= row + 20'(DH * W);
            end else begin
              ky <= 16'd0;
              iy <= y0;
              row <= y0row;
              ci <= ci + 16'd1;
              cbase <= cbase + 20'(H * W);
              if (ci == 16'(CPG - 1)) state <= WAIT;  // the output's last tap
            end
          end
        end
        WAIT:
        if (drained) begin
          if (j == 16'(COUT * OH * OW - 1)) state <= FINISH;
          else begin  // the next output: ox, then oy, then co (and its group)
            j <= j + 16'd1;
            state <= SETUP;
            if (ox != 16'(OW - 1)) begin
              ox <= ox + 16'd1;
              x0 <= x0 + 20'(SW);
            end else begin
              ox <= 16'd0;
              x0 <= -20'sd1 * 20'(PL);
              if (oy != 16'(OH - 1)) begin
                oy <= oy + 16'd1;
                y0 <= y0 + 20'(SH);
                y0row <= y0row + 20'(SH * W);
              end else begin
                oy <= 16'd0;
                y0 <= -20'sd1 * 20'(PT);
                y0row <= -20'sd1 * 20'(PT * W);
                co <= co + 16'd1;
                wbase <= wbase + 16'(K);
                if (go != 16'(OPG - 1)) go <= go + 16'd1;
                else begin
                  go <= 16'd0;
                  gbase <= gbase + 20'(CPG * H * W);
                end
              end
            end
          end
        end
        default:
        if (drained && !rq_busy) begin
          done <= 1'b1;
          state <= IDLE;
        end
      endcase
    end
  end
endmodule

// Max pooling of int8 planes (C of them, NCHW, one image): y[c, oy, ox] = max of x[c, oy·SH − PT +
// ky, ox·SW − PL + kx] over the window's taps inside the plane (padding never wins). One tap read
// a cycle; addresses stepped by additions as in rlx_conv; outputs written in NCHW order.
module rlx_maxpool #(
    parameter integer C = 1, H = 8, W = 8, KH = 2, KW = 2, OH = 4, OW = 4, SH = 2, SW = 2, PT = 0, PL = 0
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             start,
    output logic            done,
    output logic [15:0]     x_addr,
    input  wire [7:0]       x_word,
    output logic            y_we,
    output logic [15:0]     y_addr,
    output logic [7:0]      y_data
);
  localparam [1:0] IDLE = 0, SETUP = 1, ISSUE = 2, WAIT = 3;
  logic [1:0] state;
  logic [15:0] oy, ox, j, ky, kx;
  logic signed [19:0] cbase, y0, y0row, x0, iy, row, ix;
  wire in_plane = iy >= 0 && iy < H && ix >= 0 && ix < W;
  assign x_addr = 16'(cbase + row + ix);
  logic s1_valid, s1_first, s1_last, s1_inside;
  logic [15:0] s1_j;
  logic signed [7:0] best;
  logic seen;  // a tap inside the plane has been read for this output
  wire had = !s1_first && seen;  // before this tap
  wire take = s1_inside && (!had || $signed(x_word) > best);
  wire signed [7:0] best_next = take ? $signed(x_word) : best;
  always_ff @(posedge clk) begin
    done <= 1'b0;
    y_we <= 1'b0;
    s1_valid <= state == ISSUE;
    s1_first <= ky == 16'd0 && kx == 16'd0;
    s1_last <= ky == 16'(KH - 1) && kx == 16'(KW - 1);
    s1_inside <= in_plane;
    s1_j <= j;
    if (s1_valid) begin
      best <= best_next;
      seen <= had || s1_inside;
      if (s1_last) begin  // a window wholly in the padding gives −128 (−∞ clamped)
        y_we <= 1'b1;
        y_addr <= s1_j;
        y_data <= had || s1_inside ? best_next : -8'sd128;
      end
    end
    if (rst) begin
      state <= IDLE;
      s1_valid <= 1'b0;
    end else begin
      case (state)
        IDLE:
        if (start) begin
          oy <= 16'd0; ox <= 16'd0; j <= 16'd0;
          cbase <= 20'sd0; y0 <= -20'sd1 * 20'(PT); y0row <= -20'sd1 * 20'(PT * W); x0 <= -20'sd1 * 20'(PL);
          state <= SETUP;
        end
        SETUP: begin
          ky <= 16'd0; kx <= 16'd0; iy <= y0; row <= y0row; ix <= x0;
          state <= ISSUE;
        end
        ISSUE:
        if (kx != 16'(KW - 1)) begin
          kx <= kx + 16'd1;
          ix <= ix + 20'sd1;
        end else begin
          kx <= 16'd0;
          ix <= x0;
          ky <= ky + 16'd1;
          iy <= iy + 20'sd1;
          row <= row + 20'(W);
          if (ky == 16'(KH - 1)) state <= WAIT;
        end
        default:  // WAIT: the last tap's compare and write, then the next output
        if (!s1_valid && !y_we) begin
          if (j == 16'(C * OH * OW - 1)) begin
            done <= 1'b1;
            state <= IDLE;
          end else begin
            j <= j + 16'd1;
            state <= SETUP;
            if (ox != 16'(OW - 1)) begin
              ox <= ox + 16'd1;
              x0 <= x0 + 20'(SW);
            end else begin
              ox <= 16'd0;
              x0 <= -20'sd1 * 20'(PL);
              if (oy != 16'(OH - 1)) begin
                oy <= oy + 16'd1;
                y0 <= y0 + 20'(SH);
                y0row <= y0row + 20'(SH * W);
              end else begin
                oy <= 16'd0;
                y0 <= -20'sd1 * 20'(PT);
                y0row <= -20'sd1 * 20'(PT * W);
                cbase <= cbase + 20'(H * W);
              end
            end
          end
        end
      endcase
    end
  end
endmodule

`default_nettype wire
