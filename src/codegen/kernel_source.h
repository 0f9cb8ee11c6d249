// The text of one generated kernel, as axon writes it to out/.
#pragma once

#include <string>

namespace axon::codegen {

struct KernelSource {
  std::string entry;   // the C symbol of the entry function
  std::string header;  // kernel.h: the C ABI declaration, usable from C and C++
  std::string source;  // kernel.cpp: standalone C++ that includes "kernel.h"
};

}  // namespace axon::codegen
