// Reading and writing .npy files (format version 1.0, little-endian, C order),
// for exchanging tensors with numpy in tests and tools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon {

/// Writes float64 values with the given shape.
void write_npy_f64(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& data);
/// Reads a float64, float32, int32/64 or bool array as float64; throws std::runtime_error on bad input.
std::vector<double> read_npy(const std::string& path, std::vector<int64_t>* shape);

}  // namespace axon
