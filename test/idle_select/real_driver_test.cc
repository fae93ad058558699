// SPDX-License-Identifier: GPL-2.0-or-later
// The run-queue harness on the real-thread driver (bounded: a few model CPUs,
// small workloads).  Asserts completion (no lost wakeup), affinity and the
// quiescent mask invariant; no timing assertions.

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "isolation/idle_select/idle_select.h"
#include "isolation/idle_select/hooks.h"
#include "isolation/runtime/real_driver.h"

namespace isolation::idle_select {
namespace {

class IdleSelectRealDriver : public ::testing::TestWithParam<Variant> {};

TEST_P(IdleSelectRealDriver, NoLostWakeup_WorkloadsCompleteOnRealThreads) {
  auto topo = Topology::FromSynthetic("package:1 l3cache:1 core:4 pu:1");
  ASSERT_TRUE(topo.ok()) << topo.status();
  IsolationConfig iso(*topo);
  Options o;
  o.variant = GetParam();
  auto st = IdleState::Create(IdleTopology::From(*topo, iso), o);
  ASSERT_TRUE(st.ok()) << st.status();
  auto sel = MakeSelector(**st);
  IdleSelectHooks hooks(**st, *sel);
  RealDriverOptions ro;
  ro.hz = 250;
  auto d = RealThreadDriver::Create(*topo, iso, ro);
  ASSERT_TRUE(d.ok()) << d.status();
  (*d)->AddHooks(&hooks);
  const CpuMask aff = CpuMask::Range(4, 0, 2);
  HackbenchParams hb;
  hb.groups = 1;
  hb.senders = 3;
  hb.messages = 10;
  auto h = RunHackbench(**d, &hooks, hb, 3 * kNsPerSec, aff);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_TRUE(h->completed) << "hackbench left a task blocked";
  EXPECT_EQ(h->operations, 3 * 3 * 10);
  PipeParams pp;
  pp.round_trips = 200;
  auto p = RunPipe(**d, &hooks, pp, 3 * kNsPerSec);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->completed);
  SchbenchParams sp;
  sp.message_tasks = 1;
  sp.workers_per_message = 3;
  sp.rounds = 20;
  sp.think_ns = 10 * kNsPerUs;
  auto s = RunSchbench(**d, &hooks, sp, 3 * kNsPerSec);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->completed);
  EXPECT_EQ(hooks.counters().invariant_violations, 0) << "I3 under real threads";
  EXPECT_GT(hooks.counters().selections, 0);
  d->reset();  // join the CPU threads before checking quiescent state
  EXPECT_EQ((*st)->CheckSubsetInvariant(), "");
}

INSTANTIATE_TEST_SUITE_P(SomeVariants, IdleSelectRealDriver,
                         ::testing::Values(Variant::kV0, Variant::kV1, Variant::kV2, Variant::kV3,
                                           Variant::kV4Global, Variant::kV5),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return std::string(VariantName(info.param));
                         });

}  // namespace
}  // namespace isolation::idle_select
