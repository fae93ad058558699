// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// vmstat/items.h
// -----------------------------------------------------------------------------
//
// The counted items and the size limits of vmstat (vmstat.h): the zone and
// node statistics (a subset of enum zone_stat_item / node_stat_item), the
// largest threshold, zone count and zone size a configuration may have.
// Constants only.
//
// Kernel counterpart: include/linux/mmzone.h (enum zone_stat_item, enum
// node_stat_item, MAX_NUMNODES x MAX_NR_ZONES) and mm/vmstat.c's threshold
// cap.
//
// Thread-safety: constants only.

#ifndef ISOLATION_VMSTAT_ITEMS_H_
#define ISOLATION_VMSTAT_ITEMS_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "isolation/core/topology.h"

namespace isolation::vmstat {

enum class StatKind { kZone, kNode };

// A realistic subset of enum zone_stat_item / node_stat_item (v6.15 names).
// VmstatConfig chooses how many of each list are used (a prefix).
inline constexpr std::array<std::string_view, 12> kZoneItemNames = {"NR_FREE_PAGES",
                                                                    "NR_FREE_PAGES_BLOCKS",
                                                                    "NR_ZONE_INACTIVE_ANON",
                                                                    "NR_ZONE_ACTIVE_ANON",
                                                                    "NR_ZONE_INACTIVE_FILE",
                                                                    "NR_ZONE_ACTIVE_FILE",
                                                                    "NR_ZONE_UNEVICTABLE",
                                                                    "NR_ZONE_WRITE_PENDING",
                                                                    "NR_MLOCK",
                                                                    "NR_BOUNCE",
                                                                    "NR_ZSPAGES",
                                                                    "NR_FREE_CMA_PAGES"};
inline constexpr int kZoneMlock = 8;         // index of NR_MLOCK
inline constexpr int kZoneWritePending = 7;  // index of NR_ZONE_WRITE_PENDING
inline constexpr int kZoneFreePages = 0;
inline constexpr std::array<std::string_view, 16> kNodeItemNames = {
    "NR_INACTIVE_ANON", "NR_ACTIVE_ANON",      "NR_INACTIVE_FILE",      "NR_ACTIVE_FILE",
    "NR_UNEVICTABLE",   "NR_SLAB_RECLAIMABLE", "NR_SLAB_UNRECLAIMABLE", "NR_ISOLATED_ANON",
    "NR_ISOLATED_FILE", "NR_FILE_PAGES",       "NR_FILE_DIRTY",         "NR_WRITEBACK",
    "NR_SHMEM",         "NR_ANON_MAPPED",      "NR_FILE_MAPPED",        "NR_KERNEL_STACK_KB"};
inline constexpr int kNodeWriteback = 11;
inline constexpr int kMaxZoneItems = static_cast<int>(kZoneItemNames.size());
inline constexpr int kMaxNodeItems = static_cast<int>(kNodeItemNames.size());

inline constexpr int kThresholdCap = 125;  // every threshold fits an s8 step
// MAX_NUMNODES x MAX_NR_ZONES: the most zones a configuration may have
// (checked before the per-CPU threshold tables are allocated).
inline constexpr int kMaxZones = 5 * kMaxNumaNodes;
// Largest zone (and watermark, and |delta| of one update) in pages: 2^52
// pages of 4 KiB are the whole 64-bit address space.  Keeps every sum of a
// size and a drift within int64.
inline constexpr int64_t kMaxZonePages = int64_t{1} << 52;

}  // namespace isolation::vmstat

#endif  // ISOLATION_VMSTAT_ITEMS_H_
