// The key index (engine/key_index.h): the K-th nearest distance of sorted keys in one column
// (a binary search for the window of the K nearest) against a brute-force sort of every
// distance, with ties, repeated keys, far-away queries and a left-out key; and the cover of a
// query against the keys a plain scan finds within reach.

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "helpers.h"
#include "reference.h"
#include "nwreg/engine/key_index.h"
#include "nwreg/engine/key_set.h"

using namespace nwreg;

namespace {

// The rule of key_index.h (testing::kth_distance) on every distance but the left-out key's.
double brute_kth(std::span<const double> xs, double q, std::size_t exclude, std::size_t K, double inv_h, bool compact) {
  std::vector<double> d;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (i != exclude) d.push_back(std::abs(xs[i] - q) * inv_h);
  return testing::kth_distance(d, K, {.widen = compact});
}

// The keys laid out by `rows` in a k-d tree's leaf order (64 keys a leaf), and in input order.
std::pair<KeySet, KeySet> tree_and_flat(const Dataset& data, KeyRows rows) {
  KeyLayout tree_layout, flat_layout;
  tree_layout.rows = flat_layout.rows = rows;
  tree_layout.tree_leaf = 64;
  return {KeySet(data, tree_layout), KeySet(data, flat_layout)};
}

}  // namespace

TEST_CASE("key index: the K-th nearest distance in one column equals a brute-force sort") {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 2 + rng() % 60;
    // Keys on a coarse grid (many ties and repeats), or spread out.
    const bool ties = trial % 2 == 0;
    std::vector<double> x(n), y(n, 0.0);
    for (double& v : x) v = ties ? static_cast<double>(rng() % 7) : std::uniform_real_distribution<double>(-5, 5)(rng);
    const Dataset data = testing::make_dataset(x, y);
    KeyLayout layout;
    layout.rows = KeyRows::weighed_rows;  // neighbour bandwidths count rows
    const KeySet keys(data, layout);
    REQUIRE(keys.n == n);
    for (const Kernel kernel : {Kernel::gaussian, Kernel::tricube}) {
      const KeyIndex index(keys, kernel, 1e-16, true, 0);
      const bool compact = is_compact(kernel);
      std::vector<double> scratch(n);
      for (int t = 0; t < 20; ++t) {
        // Queries at keys, between them and far outside; the left-out key is a key or none.
        const double q = t % 4 == 0 ? keys.xs[rng() % n]
                         : t % 4 == 1 ? static_cast<double>(rng() % 9) - 1
                         : t % 4 == 2 ? std::uniform_real_distribution<double>(-8, 8)(rng)
                                      : 1e6 * (t % 8 == 3 ? 1 : -1);
        const std::size_t exclude = t % 3 == 0 ? no_key : rng() % n;
        const std::size_t K = 1 + rng() % (n + 2);
        const double inv_h = t % 5 == 0 ? 1e-3 : 2.5;
        // adaptive's measure: the kernel's, widened for a compact kernel (no leave-out block here)
        const double got = index.kth_distance(&q, exclude, K, &inv_h, scratch.data(), Neighbours::adaptive);
        const double want = brute_kth(keys.xs, q, exclude, K, inv_h, compact);
        // span's neighbourhood: never widened, whatever the kernel
        CHECK(index.kth_distance(&q, exclude, K, &inv_h, scratch.data(), Neighbours::span) ==
              brute_kth(keys.xs, q, exclude, K, inv_h, false));
        CAPTURE(n);
        CAPTURE(q);
        CAPTURE(exclude);
        CAPTURE(K);
        REQUIRE(got == want);  // the same distances: equal to the bit
      }
    }
  }
}

TEST_CASE("key index: a window covers every key a plain scan finds within the kernel's support") {
  std::mt19937_64 rng(7);
  std::vector<double> x(500), y(500, 0.0);
  for (double& v : x) v = std::uniform_real_distribution<double>(0, 10)(rng);
  const Dataset data = testing::make_dataset(x, y);
  const KeySet keys(data, KeyLayout{});
  const KeyIndex index(keys, Kernel::epanechnikov, 1e-16, true, 0);
  REQUIRE(index.kind() == KeyIndex::Kind::line);
  for (const double h : {0.01, 0.3, 4.0})
    for (const double q : {-1.0, 0.0, 3.3, 9.99, 12.0}) {
      const std::size_t b = index.nearest_1d(q, no_key);
      std::size_t lo = 0, hi = 0;
      index.window_1d(q, h, b, 1.0, lo, hi);
      std::size_t inside = 0, found = 0;
      for (std::size_t i = 0; i < keys.n; ++i)
        if (std::abs(keys.xs[i] - q) < h) {
          ++inside;
          found += i >= lo && i < hi;
        }
      CHECK(found == inside);
      CHECK(hi - lo <= inside + 2);  // and little else: the margins only
    }
}

TEST_CASE("key index: the K-th nearest distance from the k-d tree equals the scan of every key") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    const std::size_t n = 150 + rng() % 400, d = 2 + trial % 2;
    Dataset data;
    data.n = n;
    data.d = d;
    for (std::size_t i = 0; i < n * d; ++i)  // a coarse grid in half the trials: many ties
      data.x.push_back(trial % 2 ? static_cast<double>(rng() % 5) : std::uniform_real_distribution<double>(0, 3)(rng));
    data.y.assign(n, 0.0);
    for (std::size_t k = 0; k < d; ++k) data.x_names.push_back("x" + std::to_string(k));
    data.y_name = "y";
    const auto [tree_keys, flat_keys] = tree_and_flat(data, KeyRows::weighed_rows);
    REQUIRE(tree_keys.tree);
    REQUIRE(!tree_keys.merged);  // (a row's slot is its key)
    const std::vector<std::uint32_t> tree_key = tree_keys.slot_of_rows(), flat_key = flat_keys.slot_of_rows();
    for (const Kernel kernel : {Kernel::gaussian, Kernel::laplace, Kernel::epanechnikov}) {
      const KeyIndex tree(tree_keys, kernel, 1e-16, false, 0), flat(flat_keys, kernel, 1e-16, false, 0);
      REQUIRE(tree.kind() == KeyIndex::Kind::tree);
      REQUIRE(flat.kind() == KeyIndex::Kind::every);
      std::vector<double> scratch(n), inv_h(d);
      for (int t = 0; t < 30; ++t) {
        for (double& v : inv_h) v = t % 3 ? 1.7 : 0.01;
        const std::size_t row = rng() % n;  // a training row, left out, or a point between
        std::vector<double> q(data.x.begin() + static_cast<std::ptrdiff_t>(row * d),
                              data.x.begin() + static_cast<std::ptrdiff_t>((row + 1) * d));
        if (t % 4 == 1) q[0] += 0.25;
        const bool out = t % 4 != 1;
        const std::size_t K = 1 + rng() % (t % 5 ? 20 : n);
        CAPTURE(trial);
        CAPTURE(t);
        CAPTURE(K);
        for (const Neighbours how : {Neighbours::knn, Neighbours::adaptive, Neighbours::span})
          CHECK(tree.kth_distance(q.data(), out ? tree_key[row] : no_key, K, inv_h.data(), scratch.data(), how) ==
                flat.kth_distance(q.data(), out ? flat_key[row] : no_key, K, inv_h.data(), scratch.data(), how));
      }
      // Bounded by the last query's K-th distance (KthHint): rows left out at their own keys in
      // the tree's order, then points between them, one hint carried through both, and through
      // a change of bandwidth (where it must not serve).
      for (const std::size_t K : {std::size_t{1}, std::size_t{7}, n / 3}) {
        KthHint hint;
        for (double ih : {1.7, 0.05}) {
          std::fill(inv_h.begin(), inv_h.end(), ih);
          for (std::size_t p = 0; p < n; p += 3) {
            const std::size_t row = tree_keys.order[p];
            std::vector<double> q(data.x.begin() + static_cast<std::ptrdiff_t>(row * d),
                                  data.x.begin() + static_cast<std::ptrdiff_t>((row + 1) * d));
            CAPTURE(trial);
            CAPTURE(K);
            CAPTURE(p);
            for (const bool out : {true, false}) {
              if (!out) q[1] += 0.125;
              for (const Neighbours how : {Neighbours::knn, Neighbours::span})
                CHECK(tree.kth_distance(q.data(), out ? p : no_key, K, inv_h.data(), scratch.data(), how, &hint) ==
                      flat.kth_distance(q.data(), out ? flat_key[row] : no_key, K, inv_h.data(), scratch.data(), how));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("key index: copies of one key in several columns, one leaf of the k-d tree, give what the scan of every key gives") {
  // Three points repeated 300, 150 and 70 times (each more than a leaf: the tree cannot split
  // them, so each is one leaf of every copy) and 40 scattered keys; rows left out inside a
  // leaf of copies, its first copy included; K below, at and past a point's copies.
  std::mt19937_64 rng(23);
  const double points[3][2] = {{1, 1}, {2, 1.5}, {1, 3}};
  const int copies[3] = {300, 150, 70};
  std::vector<std::array<double, 2>> rows;
  for (int p = 0; p < 3; ++p) rows.insert(rows.end(), copies[p], {points[p][0], points[p][1]});
  for (int i = 0; i < 40; ++i)
    rows.push_back({std::uniform_real_distribution<double>(0, 4)(rng), std::uniform_real_distribution<double>(0, 4)(rng)});
  std::shuffle(rows.begin(), rows.end(), rng);  // the copies spread over the input rows
  Dataset data;
  data.d = 2;
  data.n = rows.size();
  for (const auto& r : rows) data.x.insert(data.x.end(), r.begin(), r.end());
  data.y.assign(data.n, 0.0);
  data.x_names = {"a", "b"};
  data.y_name = "y";
  const auto [tree_keys, flat_keys] = tree_and_flat(data, KeyRows::every_row);
  REQUIRE(tree_keys.tree);
  const std::vector<std::uint32_t> tree_key = tree_keys.slot_of_rows(), flat_key = flat_keys.slot_of_rows();
  const std::size_t n = data.n;
  std::vector<double> scratch(n);
  for (const Kernel kernel : {Kernel::gaussian, Kernel::epanechnikov}) {
    const KeyIndex tree(tree_keys, kernel, 1e-16, false, 0), flat(flat_keys, kernel, 1e-16, false, 0);
    REQUIRE(tree.kind() == KeyIndex::Kind::tree);
    for (double ih : {0.6, 3.0}) {
      const std::vector<double> inv_h(2, ih);
      for (std::size_t row = 0; row < n; row += 7) {
        for (const std::size_t K : {std::size_t{1}, std::size_t{20}, std::size_t{70}, std::size_t{160}, std::size_t{400}}) {
          CAPTURE(row);
          CAPTURE(K);
          for (const bool out : {true, false})
            for (const Neighbours how : {Neighbours::knn, Neighbours::adaptive, Neighbours::span})
              CHECK(tree.kth_distance(data.row(row), out ? tree_key[row] : no_key, K, inv_h.data(), scratch.data(), how) ==
                    flat.kth_distance(data.row(row), out ? flat_key[row] : no_key, K, inv_h.data(), scratch.data(), how));
        }
      }
    }
  }
  // The nearest key other than a skipped one: of equal distances, the first as given (the
  // keys' engine order), every copy's row skipped in turn.
  const std::vector<double> inv_h{1.0, 1.0};
  for (std::size_t p = 0; p < n; ++p) {
    const double* q = tree_keys.key(p);
    double r = 0;
    const std::size_t got = tree_keys.tree->nearest(q, inv_h.data(), Norm::l2, p, r);
    double best = std::numeric_limits<double>::infinity();
    std::size_t want = no_key;
    for (std::size_t i = 0; i < n; ++i) {
      if (i == p) continue;
      double s = 0;
      for (int k = 0; k < 2; ++k) s += (tree_keys.key(i)[k] - q[k]) * (tree_keys.key(i)[k] - q[k]);
      if (s < best || (s == best && tree_keys.tree->order()[i] < tree_keys.tree->order()[want])) best = s, want = i;
    }
    CAPTURE(p);
    CHECK(got == want);
    CHECK(r == best);
  }
}

TEST_CASE("rows put in x order: stably, every column along, and the keys then read x in place") {
  // x with ties (equal x keep their order), sample weights and a kept column moved along.
  Dataset data = testing::make_dataset({3, 1, 2, 1, 0.5, 3, 1}, {30, 10, 20, 11, 5, 31, 12});
  data.weight = {1, 2, 3, 4, 5, 6, 7};
  data.kept = {{"a", "b", "c", "d", "e", "f", "g"}};
  put_in_x_order(data);
  CHECK(data.x == std::vector<double>{0.5, 1, 1, 1, 2, 3, 3});
  CHECK(data.y == std::vector<double>{5, 10, 11, 12, 20, 30, 31});
  CHECK(data.weight == std::vector<double>{5, 2, 4, 7, 3, 1, 6});
  CHECK(data.kept[0] == std::vector<std::string>{"e", "b", "d", "g", "c", "a", "f"});

  // Distinct x in x order, every row a key: xs is the data's x; anything else copies it.
  const Dataset sorted = testing::make_dataset({0, 1, 2.5, 4, 7}, {1, 2, 3, 4, 5});
  KeyLayout in_place;
  in_place.x_in_place = true;
  const KeySet read(sorted, in_place), copied(sorted, KeyLayout{});
  CHECK(read.xs.data() == sorted.x.data());
  CHECK(copied.xs.data() != sorted.x.data());
  CHECK(std::equal(read.xs.begin(), read.xs.end(), copied.xs.begin(), copied.xs.end()));
  CHECK(read.ys == copied.ys);
  CHECK(read.order == copied.order);
  // A moved key set reads the same buffer.
  KeySet own(sorted, KeyLayout{});
  const double* buffer = own.xs.data();
  const KeySet moved(std::move(own));
  CHECK(moved.xs.data() == buffer);
  // Not in x order, or merged (a repeated x): copied.
  const Dataset unsorted = testing::make_dataset({1, 0, 2}, {1, 2, 3});
  CHECK(KeySet(unsorted, in_place).xs.data() != unsorted.x.data());
  const Dataset repeated = testing::make_dataset({0, 1, 1, 2}, {1, 2, 3, 4});
  const KeySet merged(repeated, in_place);
  CHECK(merged.merged);
  CHECK(merged.xs.data() != repeated.x.data());
}
