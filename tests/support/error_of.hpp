#pragma once
// The message a call threw: for tests that check what an error says, not only that it happened.
#include <gtest/gtest.h>

#include <string>

#include "wirezip/util/error.hpp"

namespace wirezip::testing {

// Runs `body` and returns the wirezip::Error message it threw; fails the test when it did not throw.
template <typename Body>
std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace wirezip::testing
