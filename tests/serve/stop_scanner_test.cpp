// Stop strings over streamed pieces (serve/stop_scanner.h): nothing from a stop string on is
// released, whatever the piece boundaries; text that cannot start one is released at once.
#include <gtest/gtest.h>

#include "serve/stop_scanner.h"

namespace rlx::serve {
namespace {

// Feeds `text` in pieces of `n` bytes; returns everything released.
std::string run(const std::vector<std::string>& stops, const std::string& text, size_t n, bool* stopped = nullptr) {
  StopScanner s(stops);
  std::string out;
  for (size_t i = 0; i < text.size() && !s.stopped(); i += n) out += s.feed(text.substr(i, n));
  out += s.flush();
  if (stopped) *stopped = s.stopped();
  return out;
}

TEST(StopScanner, CutsAtTheFirstStopWhateverThePieces) {
  for (size_t n = 1; n <= 12; ++n) {
    bool stopped = false;
    EXPECT_EQ(run({"\n\n", "END"}, "one two\nthree ENDfour\n\nfive", n, &stopped), "one two\nthree ") << "pieces of " << n;
    EXPECT_TRUE(stopped);
    EXPECT_EQ(run({"END"}, "no stop at all, E, EN", n, &stopped), "no stop at all, E, EN") << "pieces of " << n;
    EXPECT_FALSE(stopped);
  }
}

TEST(StopScanner, HoldsBackOnlyWhatCouldStartAStop) {
  StopScanner s({"</s>"});
  EXPECT_EQ(s.feed("abc"), "abc");
  EXPECT_EQ(s.feed("de<"), "de");
  EXPECT_EQ(s.feed("/"), "");
  EXPECT_EQ(s.feed("x"), "</x");  // not a stop after all
  EXPECT_EQ(s.feed("<"), "");
  EXPECT_EQ(s.feed("/s>tail"), "");
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(s.feed("more"), "");
  EXPECT_EQ(s.flush(), "");
}

TEST(StopScanner, MultibyteStopsNeverSplitACharacter) {
  // "é" is two bytes; the held-back suffix starts where a stop could, at a lead byte
  StopScanner s({"éé"});
  std::string out = s.feed("café");
  EXPECT_EQ(out, "caf");
  EXPECT_EQ(s.feed("!"), "é!");
  EXPECT_EQ(run({"éé"}, "xééy", 1), "x");
}

TEST(StopScanner, NoStopsReleaseEverything) {
  StopScanner s({});
  EXPECT_EQ(s.feed("a"), "a");
  EXPECT_EQ(s.feed(""), "");
  EXPECT_FALSE(s.stopped());
}

}  // namespace
}  // namespace rlx::serve
