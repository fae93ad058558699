// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// registry.h
// -----------------------------------------------------------------------------
//
// A registry of the variants of one mechanism axis: name -> factory, with a
// one-line description and a negative-control flag.  Each mechanism keeps one
// registry per axis (for example idle_select's selectors, vmstat's fold
// policies); everything that lists or parses variants -- the conformance
// suites' parameter lists, the benchmarks, isolab's flags and
// `isolab variants` -- reads it, so a variant registered from outside the
// library with one `Register()` call appears everywhere.
//
// Kernel counterpart: none (the kernel picks a variant at build or boot
// time); this is the library's extension point.
//
// Thread-safety contract: Register() and the readers may be called from any
// thread; they are serialised by an internal mutex.  Entries are never
// removed, and an entry's address is stable, so a `const Entry*` returned by
// Find() or All() stays valid for the registry's lifetime (the process, for
// the mechanisms' global registries).  Factories are called without the lock.

#ifndef ISOLATION_CORE_REGISTRY_H_
#define ISOLATION_CORE_REGISTRY_H_

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace isolation {

// Describes one registered variant; `Factory` is the axis's constructor type
// (typically an absl::AnyInvocable or a plain function pointer).
template <typename Factory>
struct VariantEntry {
  std::string name;         // as typed on isolab's command line and shown in tables
  std::string description;  // one line: what it is and where it comes from
  bool negative_control = false;  // known to break an invariant, kept to prove the suites can fail
  Factory factory;
};

template <typename Factory>
class VariantRegistry {
 public:
  using Entry = VariantEntry<Factory>;

  // `axis` names the axis in error messages, e.g. "idle_select selector".
  explicit VariantRegistry(std::string axis) : axis_(std::move(axis)) {}
  VariantRegistry(const VariantRegistry&) = delete;
  VariantRegistry& operator=(const VariantRegistry&) = delete;

  // Adds a variant.  Errors: an empty name, a name with characters outside
  // [A-Za-z0-9_.+-], a name already registered (case-insensitively), or a
  // null factory; the message names the value.
  absl::Status Register(Entry entry) ABSL_LOCKS_EXCLUDED(mu_) {
    if (entry.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(axis_, ": empty variant name"));
    }
    for (char c : entry.name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' &&
          c != '+' && c != '-') {
        return absl::InvalidArgumentError(absl::StrCat(axis_, ": variant name '", entry.name,
                                                       "' has a character outside [A-Za-z0-9_.+-]"));
      }
    }
    if (!static_cast<bool>(entry.factory)) {
      return absl::InvalidArgumentError(
          absl::StrCat(axis_, ": variant '", entry.name, "' has no factory"));
    }
    absl::MutexLock lock(&mu_);
    if (FindLocked(entry.name) != nullptr) {
      return absl::AlreadyExistsError(
          absl::StrCat(axis_, ": variant '", entry.name, "' is already registered"));
    }
    entries_.push_back(std::move(entry));
    return absl::OkStatus();
  }

  // The entry named `name` (case-insensitive).  Errors: NotFound naming the
  // value and listing the registered names.
  absl::StatusOr<const Entry*> Find(std::string_view name) const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (const Entry* e = FindLocked(name)) return e;
    std::vector<std::string> names;
    names.reserve(entries_.size());
    for (const Entry& e : entries_) names.push_back(e.name);
    return absl::NotFoundError(absl::StrCat("unknown ", axis_, " '", ToAbsl(name),
                                            "' (registered: ", absl::StrJoin(names, ", "), ")"));
  }

  // Every entry in registration order (built-ins first).
  std::vector<const Entry*> All() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<const Entry*> out;
    out.reserve(entries_.size());
    for (const Entry& e : entries_) out.push_back(&e);
    return out;
  }

  // Names in registration order; negative controls only when asked for.
  std::vector<std::string> Names(bool include_negative_controls = false) const
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const Entry& e : entries_) {
      if (include_negative_controls || !e.negative_control) out.push_back(e.name);
    }
    return out;
  }

  const std::string& axis() const { return axis_; }

 private:
  // Debian's Abseil has its own string_view type, distinct from std's.
  static absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

  const Entry* FindLocked(std::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const Entry& e : entries_) {
      if (absl::EqualsIgnoreCase(e.name, ToAbsl(name))) return &e;
    }
    return nullptr;
  }

  const std::string axis_;
  mutable absl::Mutex mu_;
  // A deque keeps entry addresses stable across push_back.
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// One row of `isolab variants`: a registered variant of one axis of one
// mechanism.  Each mechanism lists its axes with
// `std::vector<VariantInfo> isolation::<mechanism>::ListVariants()`.
struct VariantInfo {
  std::string mechanism;  // "mm_cid", "tmigr", "idle_select", "vmstat"
  std::string axis;       // e.g. "selector", "fold_policy", "design"
  std::string name;
  std::string description;
  bool negative_control = false;
};

// Appends every entry of `registry` as VariantInfo rows.
template <typename Factory>
void AppendVariantInfos(const VariantRegistry<Factory>& registry, std::string_view mechanism,
                        std::string_view axis, std::vector<VariantInfo>& out) {
  for (const VariantEntry<Factory>* e : registry.All()) {
    out.push_back({std::string(mechanism), std::string(axis), e->name, e->description, e->negative_control});
  }
}

}  // namespace isolation

#endif  // ISOLATION_CORE_REGISTRY_H_
