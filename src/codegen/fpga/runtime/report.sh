#!/bin/sh
# report.sh LOG — the resources and clock of an RLX FPGA program (written by `rlx export --target
# fpga…`), from nextpnr-ice40's log (the last utilisation table and Fmax it printed: after
# routing) or yosys's generic synthesis statistics; prints a table and writes report.json.
log=${1:?usage: report.sh nextpnr.log|synth.log}
[ -r "$log" ] || { echo "report.sh: cannot read $log" >&2; exit 1; }
if grep -q "Device utilisation" "$log"; then
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
