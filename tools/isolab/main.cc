// SPDX-License-Identifier: GPL-2.0-or-later
// The isolab executable: the library's entry point (isolation/isolab/isolab.h)
// with the built-in variants only.  A program of your own that registers
// variants and calls the same entry point shows them as isolab rows
// (docs/extending.md, examples/out_of_tree).

#include "isolation/isolab/isolab.h"

int main(int argc, char** argv) { return isolation::isolab::Main(argc, argv); }
