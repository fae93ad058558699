// SPDX-License-Identifier: GPL-2.0-or-later
// -----------------------------------------------------------------------------
// registry.h
// -----------------------------------------------------------------------------
//
// A registry of the variants of one mechanism axis: name -> factory, with
// everything the rest of the library asks about a variant: a one-line
// description, whether it is a negative control, where it comes from (built
// into the library or registered from outside), whether it is one of the
// experiments' default rows, the short label of its rows, and other accepted
// spellings.  Built-ins and outside variants register through the same
// `Register()` call; nothing else in the library keeps a list of names.  Each mechanism keeps one
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
#include <initializer_list>
#include <optional>
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

// Where a registered variant comes from.
enum class VariantOrigin {
  kOutside,  // registered by a user's code (the default)
  kBuiltin,  // one of the library's own variants
};

// "outside" or "builtin", as `isolab variants --json` prints it.
inline std::string_view VariantOriginName(VariantOrigin origin) {
  return origin == VariantOrigin::kBuiltin ? "builtin" : "outside";
}

// Describes one registered variant; `Factory` is the axis's constructor type
// (typically an absl::AnyInvocable or a plain function pointer).  Fields
// after `factory` have default member initializers, so
// `{name, description, control, factory}` still describes an outside variant
// that is a default row (and -Wmissing-field-initializers stays quiet).
template <typename Factory>
struct VariantEntry {
  std::string name;               // as typed on isolab's command line and shown in tables
  std::string description;        // one line: what it is and where it comes from
  bool negative_control = false;  // known to break an invariant, kept to prove the suites can fail
  Factory factory;
  VariantOrigin origin = VariantOrigin::kOutside;
  // One of the experiments' default rows (isolab runs it without a variant
  // flag)?  Unset: yes, unless a negative control.
  std::optional<bool> default_row = std::nullopt;
  // The label of its rows in experiments' tables when shorter than the name
  // (idle_select's "V4g" shows as "V4", the seeds' name); empty: the name.
  std::string label = {};
  // Other spellings Find() accepts (case-insensitive), e.g. the names a
  // variant had on isolab's command line before it was registered.
  std::vector<std::string> aliases = {};

  bool is_default_row() const { return default_row.value_or(!negative_control); }
  bool is_builtin() const { return origin == VariantOrigin::kBuiltin; }
  const std::string& row_label() const { return label.empty() ? name : label; }
};

template <typename Factory>
class VariantRegistry {
 public:
  using Entry = VariantEntry<Factory>;

  // `axis` names the axis in error messages, e.g. "idle_select selector".
  explicit VariantRegistry(std::string axis) : axis_(std::move(axis)) {}
  VariantRegistry(const VariantRegistry&) = delete;
  VariantRegistry& operator=(const VariantRegistry&) = delete;

  // Adds a variant.  Errors: an empty name, a name or alias with characters
  // outside [A-Za-z0-9_.+-], a name or alias already registered as a name or
  // alias (case-insensitively), or a null factory; the message names the
  // value.
  absl::Status Register(Entry entry) ABSL_LOCKS_EXCLUDED(mu_) {
    if (entry.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(axis_, ": empty variant name"));
    }
    if (absl::Status s = CheckSpelling(entry.name, "variant name"); !s.ok()) return s;
    for (const std::string& alias : entry.aliases) {
      if (alias.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(axis_, ": variant '", entry.name, "' has an empty alias"));
      }
      if (absl::Status s = CheckSpelling(alias, "alias"); !s.ok()) return s;
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
    for (size_t i = 0; i < entry.aliases.size(); ++i) {
      const std::string& alias = entry.aliases[i];
      bool repeated = absl::EqualsIgnoreCase(alias, entry.name);
      for (size_t k = 0; k < i; ++k)
        repeated = repeated || absl::EqualsIgnoreCase(alias, entry.aliases[k]);
      if (repeated || FindLocked(alias) != nullptr) {
        return absl::AlreadyExistsError(absl::StrCat(axis_, ": alias '", alias, "' of variant '",
                                                     entry.name,
                                                     "' is already registered or repeated"));
      }
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

  // The default rows (VariantEntry::is_default_row), in registration order:
  // what an experiment runs when no variant flag is given.
  std::vector<const Entry*> DefaultRows() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<const Entry*> out;
    for (const Entry& e : entries_) {
      if (e.is_default_row()) out.push_back(&e);
    }
    return out;
  }

  // Entries of one origin, in registration order; negative controls only
  // when asked for.
  std::vector<const Entry*> FromOrigin(VariantOrigin origin,
                                       bool include_negative_controls = false) const
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<const Entry*> out;
    for (const Entry& e : entries_) {
      if (e.origin == origin && (include_negative_controls || !e.negative_control))
        out.push_back(&e);
    }
    return out;
  }

  const std::string& axis() const { return axis_; }

 private:
  absl::Status CheckSpelling(const std::string& spelling, std::string_view what) const {
    for (char c : spelling) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '+' &&
          c != '-') {
        return absl::InvalidArgumentError(
            absl::StrCat(axis_, ": ", ToAbsl(what), " '", spelling,
                         "' has a character outside [A-Za-z0-9_.+-]"));
      }
    }
    return absl::OkStatus();
  }

  // Debian's Abseil has its own string_view type, distinct from std's.
  static absl::string_view ToAbsl(std::string_view s) {
    return absl::string_view(s.data(), s.size());
  }

  const Entry* FindLocked(std::string_view name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const Entry& e : entries_) {
      if (absl::EqualsIgnoreCase(e.name, ToAbsl(name))) return &e;
    }
    for (const Entry& e : entries_) {
      for (const std::string& alias : e.aliases) {
        if (absl::EqualsIgnoreCase(alias, ToAbsl(name))) return &e;
      }
    }
    return nullptr;
  }

  const std::string axis_;
  mutable absl::Mutex mu_;
  // A deque keeps entry addresses stable across push_back.
  std::deque<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

// `entry` marked as one of the library's own variants: what a mechanism's
// registry passes to Register() for each built-in, the call outside code
// makes for its variants.
template <typename Factory>
VariantEntry<Factory> AsBuiltin(VariantEntry<Factory> entry) {
  entry.origin = VariantOrigin::kBuiltin;
  return entry;
}

// Registers the entries the functions of `builtins` return, in order, each
// marked built-in (AsBuiltin): a mechanism's list of its own variants.
// Returns the first error (a bug of the list: names are fixed).
template <typename Factory>
absl::Status RegisterBuiltins(VariantRegistry<Factory>& registry,
                              std::initializer_list<VariantEntry<Factory> (*)()> builtins) {
  for (VariantEntry<Factory> (*entry)() : builtins) {
    if (absl::Status s = registry.Register(AsBuiltin(entry())); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// One row of `isolab variants`: a registered variant of one axis of one
// mechanism.  Each mechanism lists its axes with
// `std::vector<VariantInfo> isolation::<mechanism>::ListVariants()`.
struct VariantInfo {
  std::string mechanism;  // "mm_cid", "tmigr", "idle_select", "vmstat"
  std::string axis;       // e.g. "selector", "fold_policy", "design"
  std::string name;
  std::string description;
  bool negative_control = false;
  VariantOrigin origin = VariantOrigin::kOutside;
  bool default_row = false;  // VariantEntry::is_default_row
  std::string label = {};    // VariantEntry::row_label
  std::vector<std::string> aliases = {};
};

// Appends every entry of `registry` as VariantInfo rows.
template <typename Factory>
void AppendVariantInfos(const VariantRegistry<Factory>& registry, std::string_view mechanism,
                        std::string_view axis, std::vector<VariantInfo>& out) {
  for (const VariantEntry<Factory>* e : registry.All()) {
    out.push_back({std::string(mechanism), std::string(axis), e->name, e->description,
                   e->negative_control, e->origin, e->is_default_row(), e->row_label(),
                   e->aliases});
  }
}

}  // namespace isolation

#endif  // ISOLATION_CORE_REGISTRY_H_
