// SPDX-License-Identifier: GPL-2.0-or-later
// kernel_ctype.h (internal, not installed): the character classes of the
// kernel's lib/ctype.c, which is Latin-1: besides ASCII, isspace() includes
// 0xA0 (no-break space) and isalpha() the letters 0xC0-0xFF except 0xD7 and
// 0xF7.  Parsers that must give the kernel's verdict on a byte string
// (command lines, cpulists) use these instead of <cctype>, whose answer
// depends on the C locale.  Thread safety: pure functions.

#ifndef ISOLATION_LIB_CORE_KERNEL_CTYPE_H_
#define ISOLATION_LIB_CORE_KERNEL_CTYPE_H_

namespace isolation::internal {

inline bool KernelIsSpace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xA0;
}
inline bool KernelIsSpace(char c) { return KernelIsSpace(static_cast<unsigned char>(c)); }

inline bool KernelIsAlpha(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c != 0xD7 && c != 0xF7);
}
inline bool KernelIsAlpha(char c) { return KernelIsAlpha(static_cast<unsigned char>(c)); }

}  // namespace isolation::internal

#endif  // ISOLATION_LIB_CORE_KERNEL_CTYPE_H_
