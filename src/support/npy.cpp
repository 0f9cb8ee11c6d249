#include "support/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace axon {

void write_npy_f64(const std::string& path, const std::vector<int64_t>& shape, const std::vector<double>& data) {
  std::ostringstream dict;
  dict << "{'descr': '<f8', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict << shape[i] << (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dict << "), }";
  std::string header = dict.str();
  // Magic (6) + version (2) + length (2) + header, padded with spaces to 64 bytes, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * sizeof(double)));
}

std::vector<double> read_npy(const std::string& path, std::vector<int64_t>* shape) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + " is not a .npy file");
  uint32_t len = 0;
  if (magic[6] == 1) {
    uint16_t l16;
    f.read(reinterpret_cast<char*>(&l16), 2);
    len = l16;
  } else {
    f.read(reinterpret_cast<char*>(&len), 4);
  }
  std::string header(len, '\0');
  f.read(header.data(), len);
  auto field = [&](const std::string& key) {
    size_t p = header.find("'" + key + "'");
    if (p == std::string::npos) throw std::runtime_error(path + ": no " + key + " in header");
    return p + key.size() + 2;
  };
  size_t d = header.find('\'', header.find(':', field("descr")));
  std::string descr = header.substr(d + 1, header.find('\'', d + 1) - d - 1);
  if (header.find("True", field("fortran_order")) < header.find(',', field("fortran_order")))
    throw std::runtime_error(path + ": fortran order is not supported");
  size_t s0 = header.find('(', field("shape")), s1 = header.find(')', s0);
  shape->clear();
  std::stringstream ss(header.substr(s0 + 1, s1 - s0 - 1));
  std::string item;
  int64_t n = 1;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(" ") != std::string::npos) {
      shape->push_back(std::stoll(item));
      n *= shape->back();
    }
  std::vector<double> out(static_cast<size_t>(n));
  auto read_as = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> raw(out.size());
    f.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof(T)));
    for (size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<double>(raw[i]);
  };
  if (descr == "<f8") read_as(double{});
  else if (descr == "<f4") read_as(float{});
  else if (descr == "<i4") read_as(int32_t{});
  else if (descr == "<i8") read_as(int64_t{});
  else if (descr == "|b1" || descr == "|u1") read_as(uint8_t{});
  else throw std::runtime_error(path + ": unsupported dtype " + descr);
  if (!f) throw std::runtime_error(path + ": truncated data");
  return out;
}

}  // namespace axon
