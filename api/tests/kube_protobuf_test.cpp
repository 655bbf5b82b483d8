// Bodies in Kubernetes' protobuf encoding (api/kube_protobuf.hpp), as client-go's typed clients
// send them: the envelope is read, a PriorityClass becomes its JSON form, and anything else is
// refused naming what to send.

#include "api/kube_protobuf.hpp"

#include "api/codec.hpp"
#include "api/proto/kube_wire.pb.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api {
namespace {

std::string envelope(std::string_view api_version, std::string_view kind,
                     const google::protobuf::Message& raw) {
  kube::Unknown u;
  u.mutable_type_meta()->set_api_version(std::string(api_version));
  u.mutable_type_meta()->set_kind(std::string(kind));
  u.set_raw(raw.SerializeAsString());
  u.set_content_type("application/vnd.kubernetes.protobuf");
  return std::string("k8s\0", 4) + u.SerializeAsString();
}

TEST(KubeProtobuf, APriorityClassIsReadAsItsJsonAndDecodes) {
  kube::PriorityClass c;
  c.mutable_metadata()->set_name("batch-low");
  (*c.mutable_metadata()->mutable_labels())["team"] = "ml";
  c.set_value(10);
  c.set_global_default(false);
  c.set_description("below the rest");
  c.set_preemption_policy("Never");
  auto v = kube_protobuf_to_json(envelope("scheduling.k8s.io/v1", "PriorityClass", c));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->at("metadata").at("labels").at("team"), "ml");
  auto decoded = decode_object(*v);
  ASSERT_TRUE(decoded) << decoded.error().message;
  const auto& pc = std::get<priority_class_object>(*decoded).priority_class;
  EXPECT_EQ(pc.meta.name, "batch-low");
  EXPECT_EQ(pc.value, 10);
  EXPECT_EQ(pc.description, "below the rest");
  EXPECT_EQ(pc.preemption, scheduler::preemption_policy::never);
}

// A typed client's DELETE carries its DeleteOptions so: the dry run must be seen.
TEST(KubeProtobuf, DeleteOptionsGiveTheirDryRun) {
  kube::DeleteOptions d;
  d.add_dry_run("All");
  auto v = kube_protobuf_to_json(envelope("v1", "DeleteOptions", d));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->at("dryRun").as_array().size(), 1u);
  EXPECT_EQ(v->at("dryRun").as_array()[0], "All");
  auto none = kube_protobuf_to_json(envelope("meta.k8s.io/v1", "DeleteOptions", kube::DeleteOptions{}));
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->at("dryRun").as_array().empty());
}

TEST(KubeProtobuf, OtherKindsAndBrokenBodiesAreRefused) {
  kube::PriorityClass c;
  auto pod = kube_protobuf_to_json(envelope("v1", "Pod", c));
  ASSERT_FALSE(pod);
  EXPECT_EQ(pod.error().code(), 415);
  EXPECT_NE(pod.error().message.find("send application/json"), std::string::npos);
  auto no_magic = kube_protobuf_to_json("{\"kind\":\"PriorityClass\"}");
  ASSERT_FALSE(no_magic);
  EXPECT_EQ(no_magic.error().code(), 400);
  auto broken = kube_protobuf_to_json(std::string("k8s\0\x0a\xff", 6));
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code(), 400);
}

} // namespace
} // namespace phalanx::api
