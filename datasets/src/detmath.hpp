#pragma once
// Deterministic random numbers and the few transcendental functions the generators need.
//
// Why not <random> distributions and <cmath> log/exp: std::normal_distribution and friends are
// implementation-defined (libstdc++ and libc++ give different numbers), and libm's log/exp may
// differ in the last bit between libm versions, which would flip a bf16 rounding now and then.
// std::mt19937_64 is specified bit for bit, and the code below uses only + - * / sqrt frexp ldexp,
// which IEEE 754 defines exactly (the target is built with -ffp-contract=off so no FMA sneaks in).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace wirezip::datasets::detail {

// SplitMix64 finalizer: spreads (seed, kind, tensor, chunk) into unrelated engine seeds.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t kind, std::uint64_t tensor, std::uint64_t chunk) {
  return mix64(mix64(mix64(mix64(seed) ^ kind) ^ tensor) ^ chunk);
}

constexpr double kLn2 = 0.6931471805599453094;
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (Cody-Waite range reduction).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;

// Natural log of a positive finite x; relative error ~1e-15, identical on every IEEE host.
inline double det_log(double x) {
  int exponent = 0;
  double m = std::frexp(x, &exponent);  // x = m * 2^exponent, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    --exponent;
  }
  // m in [sqrt(1/2), sqrt(2)): log m = 2 atanh(f) with |f| < 0.172, a fast-converging odd series.
  double f = (m - 1.0) / (m + 1.0);
  double f2 = f * f;
  double series = 0.0;  // 1 + f2/3 + f2^2/5 + ... + f2^9/19, by Horner; next term < 1e-15
  for (int odd = 19; odd >= 1; odd -= 2) series = series * f2 + 1.0 / odd;
  return exponent * kLn2 + 2.0 * f * series;
}

// e^x; overflows to +inf and underflows to 0 like exp does.
inline double det_exp(double x) {
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  double k = std::floor(x * (1.0 / kLn2) + 0.5);
  double r = (x - k * kLn2Hi) - k * kLn2Lo;  // |r| <= ~0.347
  // Taylor series to r^13 / 13!, by Horner; the next term is below 1e-17.
  double p = 0.0;
  for (int n = 13; n >= 1; --n) p = (p + 1.0) * r * (1.0 / n);
  p += 1.0;
  return std::ldexp(p, static_cast<int>(k));
}

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  // [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1p-53; }
  // (0, 1]: safe to take the log of.
  double uniform_positive() { return static_cast<double>((engine_() >> 11) + 1) * 0x1p-53; }

  // Standard normal by Marsaglia's polar method: two uniforms in the unit disc give two normals.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0, v = 0, s = 0;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    double scale = std::sqrt(-2.0 * det_log(s) / s);
    spare_ = v * scale;
    has_spare_ = true;
    return u * scale;
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace wirezip::datasets::detail
