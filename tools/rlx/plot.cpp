#include "plot.h"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::cli {

namespace {

// 5×7 glyphs, one string per row, '#' set.
const std::map<char, std::vector<const char*>>& font() {
  static const std::map<char, std::vector<const char*>> f = {
      {'0', {" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "}},
      {'1', {"  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "}},
      {'2', {" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"}},
      {'3', {"#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "}},
      {'4', {"   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "}},
      {'5', {"#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "}},
      {'6', {"  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "}},
      {'7', {"#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "}},
      {'8', {" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "}},
      {'9', {" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "}},
      {'.', {"     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "}},
      {'-', {"     ", "     ", "     ", "#####", "     ", "     ", "     "}},
      {'%', {"##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"}},
      {'(', {"   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "}},
      {')', {" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "}},
      {'a', {"     ", "     ", " ### ", "    #", " ####", "#   #", " ####"}},
      {'b', {"#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#### "}},
      {'c', {"     ", "     ", " ### ", "#    ", "#    ", "#   #", " ### "}},
      {'d', {"    #", "    #", " ## #", "#  ##", "#   #", "#   #", " ####"}},
      {'e', {"     ", "     ", " ### ", "#   #", "#####", "#    ", " ### "}},
      {'f', {"  ## ", " #  #", " #   ", "###  ", " #   ", " #   ", " #   "}},
      {'g', {"     ", " ####", "#   #", "#   #", " ####", "    #", " ### "}},
      {'h', {"#    ", "#    ", "# ## ", "##  #", "#   #", "#   #", "#   #"}},
      {'i', {"  #  ", "     ", " ##  ", "  #  ", "  #  ", "  #  ", " ### "}},
      {'k', {"#    ", "#    ", "#  # ", "# #  ", "##   ", "# #  ", "#  # "}},
      {'l', {" ##  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "}},
      {'m', {"     ", "     ", "## # ", "# # #", "# # #", "#   #", "#   #"}},
      {'n', {"     ", "     ", "# ## ", "##  #", "#   #", "#   #", "#   #"}},
      {'o', {"     ", "     ", " ### ", "#   #", "#   #", "#   #", " ### "}},
      {'p', {"     ", "     ", "#### ", "#   #", "#### ", "#    ", "#    "}},
      {'r', {"     ", "     ", "# ## ", "##  #", "#    ", "#    ", "#    "}},
      {'s', {"     ", "     ", " ####", "#    ", " ### ", "    #", "#### "}},
      {'t', {" #   ", " #   ", "###  ", " #   ", " #   ", " #  #", "  ## "}},
      {'u', {"     ", "     ", "#   #", "#   #", "#   #", "#  ##", " ## #"}},
      {'v', {"     ", "     ", "#   #", "#   #", "#   #", " # # ", "  #  "}},
      {'x', {"     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #"}},
      {'y', {"     ", "     ", "#   #", "#   #", " ####", "    #", " ### "}},
      {' ', {"     ", "     ", "     ", "     ", "     ", "     ", "     "}},
  };
  return f;
}

struct Canvas {
  int w, h;
  std::vector<uint8_t> rgb;
  Canvas(int w_, int h_) : w(w_), h(h_), rgb(static_cast<size_t>(w_ * h_ * 3), 255) {}
  void set(int x, int y, unsigned c) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    size_t i = static_cast<size_t>((y * w + x) * 3);
    rgb[i] = static_cast<uint8_t>(c >> 16);
    rgb[i + 1] = static_cast<uint8_t>(c >> 8);
    rgb[i + 2] = static_cast<uint8_t>(c);
  }
  void line(double x0, double y0, double x1, double y1, unsigned c, int thick = 1) {
    int steps = static_cast<int>(std::max(std::fabs(x1 - x0), std::fabs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; ++i) {
      double t = static_cast<double>(i) / steps;
      int x = static_cast<int>(std::lround(x0 + (x1 - x0) * t)), y = static_cast<int>(std::lround(y0 + (y1 - y0) * t));
      for (int dx = 0; dx < thick; ++dx)
        for (int dy = 0; dy < thick; ++dy) set(x + dx, y + dy, c);
    }
  }
  void text(int x, int y, const std::string& s, unsigned c) {
    for (char ch : s) {
      auto it = font().find(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
      if (it != font().end())
        for (int r = 0; r < 7; ++r)
          for (int k = 0; k < 5; ++k)
            if (it->second[r][k] == '#') set(x + k, y + r, c);
      x += 6;
    }
  }
};

std::string tick_label(double v) {
  char buf[32];
  double a = std::fabs(v);
  if (a != 0 && (a < 0.01 || a >= 100000)) std::snprintf(buf, sizeof(buf), "%.1e", v);
  else if (a >= 100) std::snprintf(buf, sizeof(buf), "%.0f", v);
  else std::snprintf(buf, sizeof(buf), "%.3g", v);
  std::string s(buf);
  for (auto& ch : s)
    if (ch == '+') ch = ' ';
  return s;
}

void draw_panel(Canvas& cv, int ox, int w, int h, const Panel& p) {
  const int left = 52, right = 12, top = 24, bottom = 34;
  int px0 = ox + left, px1 = ox + w - right, py0 = top, py1 = h - bottom;
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  for (const auto& s : p.series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.y[i])) continue;
      xmin = std::min(xmin, s.x[i]);
      xmax = std::max(xmax, s.x[i]);
      ymin = std::min(ymin, s.y[i]);
      ymax = std::max(ymax, s.y[i]);
    }
  if (xmin > xmax) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (xmax == xmin) xmax = xmin + 1;
  if (ymax == ymin) ymax = ymin + 1;
  double pad = (ymax - ymin) * 0.05;
  ymin -= pad;
  ymax += pad;
  auto X = [&](double x) { return px0 + (x - xmin) / (xmax - xmin) * (px1 - px0); };
  auto Y = [&](double y) { return py1 - (y - ymin) / (ymax - ymin) * (py1 - py0); };
  for (int t = 0; t <= 4; ++t) {  // grid and tick labels
    double yv = ymin + (ymax - ymin) * t / 4, xv = xmin + (xmax - xmin) * t / 4;
    cv.line(px0, Y(yv), px1, Y(yv), 0xe6e6e6);
    cv.line(X(xv), py0, X(xv), py1, 0xe6e6e6);
    std::string yl = tick_label(yv), xl = tick_label(xv);
    cv.text(px0 - 4 - 6 * static_cast<int>(yl.size()), static_cast<int>(Y(yv)) - 3, yl, 0x444444);
    cv.text(static_cast<int>(X(xv)) - 3 * static_cast<int>(xl.size()), py1 + 6, xl, 0x444444);
  }
  cv.line(px0, py0, px0, py1, 0x000000);
  cv.line(px0, py1, px1, py1, 0x000000);
  cv.text(ox + (w - 6 * static_cast<int>(p.title.size())) / 2, 8, p.title, 0x000000);
  cv.text(ox + (w - 6 * static_cast<int>(p.xlabel.size())) / 2, h - 14, p.xlabel, 0x000000);
  int legend_y = py0 + 4;
  for (const auto& s : p.series) {
    for (size_t i = 1; i < s.x.size(); ++i)
      if (std::isfinite(s.y[i - 1]) && std::isfinite(s.y[i])) cv.line(X(s.x[i - 1]), Y(s.y[i - 1]), X(s.x[i]), Y(s.y[i]), s.rgb, 2);
    if (s.x.size() == 1) cv.line(X(s.x[0]) - 2, Y(s.y[0]), X(s.x[0]) + 2, Y(s.y[0]), s.rgb, 3);
    cv.line(px1 - 90, legend_y + 3, px1 - 76, legend_y + 3, s.rgb, 2);
    cv.text(px1 - 70, legend_y, s.label, 0x222222);
    legend_y += 11;
  }
}

void put_u32(std::string& s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}

void chunk(std::string& out, const char* type, const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  std::string td = std::string(type, 4) + data;
  out += td;
  put_u32(out, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(td.data()), static_cast<uInt>(td.size()))));
}

}  // namespace

void write_plot_png(const std::string& path, const std::vector<Panel>& panels, int panel_width, int height) {
  Canvas cv(panel_width * static_cast<int>(panels.size()), height);
  for (size_t i = 0; i < panels.size(); ++i) draw_panel(cv, static_cast<int>(i) * panel_width, panel_width, height, panels[i]);
  std::string raw;
  for (int y = 0; y < cv.h; ++y) {
    raw += '\0';  // filter: none
    raw.append(reinterpret_cast<const char*>(cv.rgb.data()) + static_cast<size_t>(y * cv.w * 3), static_cast<size_t>(cv.w * 3));
  }
  uLongf zlen = compressBound(static_cast<uLong>(raw.size()));
  std::string z(zlen, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &zlen, reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 6);
  z.resize(zlen);
  std::string png = "\x89PNG\r\n\x1a\n";
  std::string ihdr;
  put_u32(ihdr, static_cast<uint32_t>(cv.w));
  put_u32(ihdr, static_cast<uint32_t>(cv.h));
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB
  chunk(png, "IHDR", ihdr);
  chunk(png, "IDAT", z);
  chunk(png, "IEND", "");
  std::ofstream f(path, std::ios::binary);
  if (!f || !f.write(png.data(), static_cast<std::streamsize>(png.size()))) throw Error(ErrorKind::io, cat("cannot write the plot to ", path));
}

}  // namespace rlx::cli
