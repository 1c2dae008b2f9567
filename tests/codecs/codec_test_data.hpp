#pragma once
// Inputs the codec tests round-trip: every synthetic traffic kind plus shapes that stress edges.
#include <random>
#include <string>
#include <vector>

#include "wirezip/datasets/dataset.hpp"

namespace wirezip::testing {

struct Input {
  std::string name;
  std::vector<std::byte> bytes;
};

inline std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

inline std::vector<Input> codec_inputs(std::size_t size) {
  std::vector<Input> inputs;
  for (const char* kind : {"weights", "gradients", "activations"}) {
    auto data = datasets::load_dataset(std::string("synthetic:") + kind + ":size=" + std::to_string(size) + ":seed=7");
    inputs.push_back({kind, std::vector<std::byte>(data.bytes.begin(), data.bytes.end())});
  }
  inputs.push_back({"random", random_bytes(size, 11)});
  inputs.push_back({"zeros", std::vector<std::byte>(size)});
  std::vector<std::byte> ramp(size);
  for (std::size_t i = 0; i < size; ++i) ramp[i] = static_cast<std::byte>(i % 251);
  inputs.push_back({"ramp", std::move(ramp)});
  return inputs;
}

}  // namespace wirezip::testing
