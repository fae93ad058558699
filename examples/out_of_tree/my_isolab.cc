// SPDX-License-Identifier: GPL-2.0-or-later
// isolab with this project's variants in it: the installed isolab entry point
// (isolation::isolab) linked with the variants' registrations.  `my_isolab
// idle` and `my_isolab vmstat` show last_idle_hint and B.half as rows beside
// mainline's without a flag, `--idle_variants=V0,last_idle_hint` narrows the
// run to them, and `my_isolab variants` lists them.

#include "isolation/isolab/isolab.h"

int main(int argc, char** argv) { return isolation::isolab::Main(argc, argv); }
