// Line plots as PNG files (training curves): a tiny raster canvas, a 5×7 font for labels, and a
// PNG encoder on zlib. No plotting library needed at run time.
#pragma once
#include <string>
#include <vector>

namespace rlx::cli {

struct Series {
  std::string label;
  std::vector<double> x, y;
  unsigned rgb;  // 0xRRGGBB
};

struct Panel {
  std::string title, xlabel;
  std::vector<Series> series;
};

// Panels side by side in one PNG. Throws rlx::Error(io) when the file cannot be written.
void write_plot_png(const std::string& path, const std::vector<Panel>& panels, int panel_width = 480, int height = 360);

}  // namespace rlx::cli
