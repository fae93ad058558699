// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// isolab/isolab.h
// -----------------------------------------------------------------------------
//
// The isolab command line as a library entry point (`isolation::isolab`,
// CMake): a program that registers variants of its own (an idle_select
// selector, a vmstat fold policy, a tmigr participation, an mm_cid scope,
// placement or allocator; core/registry.h) and calls Main() from its main()
// is isolab with those variants in it -- `idle`, `mmcid`, `tmigr` and
// `vmstat` accept their names and show them as rows beside the kernel's
// without any flag, and `variants` lists them.
//
//   int main(int argc, char** argv) { return isolation::isolab::Main(argc, argv); }
//
// Subcommands, flags and exit status are isolab's (README "isolab" and
// `<program> help`): 0 on success, 2 on bad input (message on stderr), 1
// when an experiment fails at run time or reports an invariant violation.
//
// Kernel counterpart: none (isolab reproduces the kernel threads'
// experiments; it is not a kernel interface).
//
// Thread-safety contract: call once, from main(), after the static
// initialisers (the variants' registrations) have run and before other
// threads use the absl flags it defines; it reads and sets those flags and
// writes to stdout and stderr.

#ifndef ISOLATION_ISOLAB_ISOLAB_H_
#define ISOLATION_ISOLAB_ISOLAB_H_

namespace isolation::isolab {

// Runs `argv[1]` (a subcommand) with the flags `argv[2..argc)`, as the
// isolab executable does; returns its exit status.
int Main(int argc, char** argv);

}  // namespace isolation::isolab

#endif  // ISOLATION_ISOLAB_ISOLAB_H_
