#!/bin/sh
# report.sh LOG — the resources and clock of an RLX FPGA program (written by `rlx export --target
# fpga…`), from nextpnr-ice40's log (the last utilisation table and Fmax it printed: after
# routing), yosys's generic synthesis statistics (report.json) or its static timing analysis of
# the 7-series netlist (timing.json); prints a table.
log=${1:?usage: report.sh nextpnr.log|synth.log|sta.log}
[ -r "$log" ] || { echo "report.sh: cannot read $log" >&2; exit 1; }
if grep -q "Latest arrival time" "$log"; then
  # yosys sta on the Xilinx 7-series netlist, module by module (a fully parallel datapath's
  # neurons are modules that share nothing, so the slowest module path is the design's): cell
  # delays of yosys's Artix-7 (-1) library (Project X-Ray's measurements, no wires); a path that
  # starts at a module's input gets the launching register's clock buffer and clock-to-out of the
  # same library (LAUNCH_PS, 399); then an allowance for routing, ROUTE_PS (default 400) per net the
  # path crosses — each cell input on it but a CARRY4's dedicated carry-in — and the endpoint's.
  # An estimate, not a placement.
  route=${ROUTE_PS:-400}
  launch=${LAUNCH_PS:-399}
  awk -v route="$route" -v launch="$launch" '
    function close_path() {
      if (module == "") return
      p = arrival + (cq ? 0 : launch) + nets * route
      if (p > worst) { worst = p; worst_module = module; worst_cells = arrival + (cq ? 0 : launch); worst_nets = nets }
      module = ""
    }
    /Latest arrival time in/ {
      close_path()
      module = $0; sub(/.*in \047/, "", module); sub(/\047.*/, "", module)
      arrival = $NF; sub(":", "", arrival); nets = 0; cq = 0; on = 1; next
    }
    on && /^ *[0-9]+ .*\(.*\)$/ {
      arc = $0; sub(/.*\(/, "", arc); sub(/\).*/, "", arc)
      if (arc ~ /\.C->Q$/) { cq = 1; next }
      if (arc ~ /^(BUFG|IBUF|BUFGCTRL|OBUF)\./ || arc ~ /^CARRY4\.CI->/ || arc ~ /primary input/) next
      nets++
    }
    on && /Arrival histogram/ { on = 0; close_path() }
    END {
      close_path()
      while ((getline line < "xc7_stat.txt") > 0) {
        split(line, f, " ")
        if (line ~ /Number of cells:/) { luts = 0; carry = 0; ffs = 0; muxes = 0 }
        if (f[1] ~ /^LUT[1-6]$/) luts += f[2]
        if (f[1] == "CARRY4") carry += f[2]
        if (f[1] ~ /^FD[RSCP]E$/) ffs += f[2]
        if (f[1] ~ /^MUXF[78]$/) muxes += f[2]
      }
      printf "xc7 netlist: %d LUTs, %d CARRY4, %d MUXF7/8, %d flip-flops (no DSPs)\n", luts, carry, muxes, ffs
      printf "critical path (in %s): %.3f ns of cells + %d nets x %.2f ns of routing allowance = %.3f ns\n", worst_module, worst_cells / 1000, worst_nets, route / 1000, worst / 1000
      printf "Fmax (estimate) %.1f MHz; the cells alone would allow %.1f MHz\n", 1e6 / worst, 1e6 / worst_cells
      printf "{\"xc7_lut\":%d,\"xc7_carry4\":%d,\"xc7_ff\":%d,\"critical_module\":\"%s\",\"cell_delay_ns\":%.3f,\"nets\":%d,\"route_ns_per_net\":%.3f,\"period_ns\":%.3f,\"fmax_mhz\":%.1f}\n",
        luts, carry, ffs, worst_module, worst_cells / 1000, worst_nets, route / 1000, worst / 1000, 1e6 / worst > "timing.json"
    }' "$log"
elif grep -q "Device utilisation" "$log"; then
  awk '
    /Device utilisation/ { n = 0 }
    /ICESTORM_LC:|ICESTORM_RAM:|ICESTORM_SPRAM:|ICESTORM_DSP:/ {
      name = $2; sub(":", "", name); split($3, a, "/"); used[name] = a[1]; total[name] = $4 }
    /Max frequency for clock/ && !/PACKER/ { line = $0 }
    END {
      split(line, f, "\047: "); split(f[2], g, " "); fmax = g[1]
      if (match(line, /at [0-9.]+ MHz/)) target = substr(line, RSTART + 3, RLENGTH - 7); else target = 0
      pass = line ~ /PASS/ ? "true" : "false"
      printf "%-10s %8s %8s\n", "resource", "used", "of"
      printf "%-10s %8s %8s\n", "LUT (LC)", used["ICESTORM_LC"], total["ICESTORM_LC"]
      printf "%-10s %8s %8s\n", "EBR", used["ICESTORM_RAM"], total["ICESTORM_RAM"]
      printf "%-10s %8s %8s\n", "SPRAM", used["ICESTORM_SPRAM"], total["ICESTORM_SPRAM"]
      printf "%-10s %8s %8s\n", "DSP", used["ICESTORM_DSP"], total["ICESTORM_DSP"]
      printf "Fmax %s MHz (target %s MHz: %s)\n", fmax, target, pass == "true" ? "met" : "NOT met"
      printf "{\"lc\":%d,\"lc_total\":%d,\"ebr\":%d,\"spram\":%d,\"dsp\":%d,\"fmax_mhz\":%s,\"target_mhz\":%s,\"timing_met\":%s}\n",
        used["ICESTORM_LC"], total["ICESTORM_LC"], used["ICESTORM_RAM"], used["ICESTORM_SPRAM"], used["ICESTORM_DSP"], fmax == "" ? 0 : fmax, target, pass > "report.json"
    }' "$log"
else
  # yosys stat after `synth -lut 6`: 6-input LUTs and flip-flops ($_DFF…, $_SDFF…, $_DFFE…)
  awk '
    /Number of cells:/ { luts = 0; ffs = 0 }
    $1 == "$lut" { luts = $2 }
    $1 ~ /^\$_(S|A)?DFFS?E?_/ || $1 ~ /^\$_DFF/ { ffs += $2 }
    END {
      # the MAC arrays: the 8×8 multipliers model.json counts (LUTs here; DSP blocks on a real part)
      m = 0
      while ((getline line < "model.json") > 0) if (match(line, /"multipliers":[0-9]+/)) m = substr(line, RSTART + 14, RLENGTH - 14)
      printf "%-12s %8d\n%-12s %8d\n%-12s %8d\n", "LUT6", luts, "flip-flops", ffs, "8x8 MACs", m
      printf "{\"lut6\":%d,\"ff\":%d,\"multipliers\":%d}\n", luts, ffs, m > "report.json"
    }' "$log"
fi
