// The three patch formats (api/json_patch.hpp), against the RFCs' own examples and what
// apimachinery does with the strategic merge patches kubectl sends.

#include "api/json_patch.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api {
namespace {

namespace json = boost::json;

struct patch_case {
  const char* name;
  const char* target;
  const char* patch;
  const char* expected;  // nullptr: the patch is refused.
  const char* error_part = "";
};

void PrintTo(const patch_case& c, std::ostream* os) { *os << c.name; }

void check(const patch_case& c, const result<json::value>& got) {
  if (c.expected == nullptr) {
    ASSERT_FALSE(got) << json::serialize(*got);
    EXPECT_EQ(got.error().code(), errc::invalid_argument);
    EXPECT_NE(got.error().message().find(c.error_part), std::string::npos)
        << got.error().message();
    return;
  }
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_EQ(*got, json::parse(c.expected)) << json::serialize(*got);
}

// RFC 7386, appendix A, and the members a kubectl label sends.
class MergePatch : public ::testing::TestWithParam<patch_case> {};

TEST_P(MergePatch, GivesTheRfcsResult) {
  const auto& c = GetParam();
  check(c, apply_merge_patch(json::parse(c.target), json::parse(c.patch)));
}

INSTANTIATE_TEST_SUITE_P(
    Rfc7386, MergePatch,
    ::testing::Values(
        patch_case{"replace", R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
        patch_case{"add", R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
        patch_case{"remove", R"({"a":"b"})", R"({"a":null})", R"({})"},
        patch_case{"remove_one", R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
        patch_case{"array_replaces", R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
        patch_case{"scalar_to_array", R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
        patch_case{"nested", R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})",
                   R"({"a":{"b":"d"}})"},
        patch_case{"array_of_objects", R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
        patch_case{"arrays_whole", R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
        patch_case{"object_over_array", R"(["a"])", R"({"a":"b"})", R"({"a":"b"})"},
        patch_case{"null_member_of_new", R"({})", R"({"a":{"bb":{"ccc":null}}})",
                   R"({"a":{"bb":{}}})"},
        patch_case{"kubectl_label", R"({"metadata":{"labels":{"x":"1"},"name":"p"}})",
                   R"({"metadata":{"labels":{"team":"ml","x":null}}})",
                   R"({"metadata":{"labels":{"team":"ml"},"name":"p"}})"}),
    [](const auto& info) { return std::string(info.param.name); });

// RFC 6902, appendix A, and the refusals.
class JsonPatch : public ::testing::TestWithParam<patch_case> {};

TEST_P(JsonPatch, GivesTheRfcsResult) {
  const auto& c = GetParam();
  check(c, apply_json_patch(json::parse(c.target), json::parse(c.patch)));
}

INSTANTIATE_TEST_SUITE_P(
    Rfc6902, JsonPatch,
    ::testing::Values(
        patch_case{"add_member", R"({"foo":"bar"})", R"([{"op":"add","path":"/baz","value":"qux"}])",
                   R"({"baz":"qux","foo":"bar"})"},
        patch_case{"add_item", R"({"foo":["bar","baz"]})",
                   R"([{"op":"add","path":"/foo/1","value":"qux"}])",
                   R"({"foo":["bar","qux","baz"]})"},
        patch_case{"remove_member", R"({"baz":"qux","foo":"bar"})",
                   R"([{"op":"remove","path":"/baz"}])", R"({"foo":"bar"})"},
        patch_case{"remove_item", R"({"foo":["bar","qux","baz"]})",
                   R"([{"op":"remove","path":"/foo/1"}])", R"({"foo":["bar","baz"]})"},
        patch_case{"replace", R"({"baz":"qux","foo":"bar"})",
                   R"([{"op":"replace","path":"/baz","value":"boo"}])",
                   R"({"baz":"boo","foo":"bar"})"},
        patch_case{"move", R"({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}})",
                   R"([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}])",
                   R"({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})"},
        patch_case{"move_item", R"({"foo":["all","grass","cows","eat"]})",
                   R"([{"op":"move","from":"/foo/1","path":"/foo/3"}])",
                   R"({"foo":["all","cows","eat","grass"]})"},
        patch_case{"test_passes", R"({"baz":"qux","foo":["a",2,"c"]})",
                   R"([{"op":"test","path":"/baz","value":"qux"},
                       {"op":"test","path":"/foo/1","value":2}])",
                   R"({"baz":"qux","foo":["a",2,"c"]})"},
        patch_case{"test_fails", R"({"baz":"qux"})",
                   R"([{"op":"test","path":"/baz","value":"bar"}])", nullptr, "operation 0 (test)"},
        patch_case{"add_nested", R"({"foo":"bar"})",
                   R"([{"op":"add","path":"/child","value":{"grandchild":{}}}])",
                   R"({"foo":"bar","child":{"grandchild":{}}})"},
        patch_case{"add_to_missing_parent", R"({"foo":"bar"})",
                   R"([{"op":"add","path":"/baz/bat","value":"qux"}])", nullptr,
                   "the path /baz/bat does not exist"},
        patch_case{"escapes", R"({"/":9,"~1":10})", R"([{"op":"test","path":"/~01","value":10},
                                                       {"op":"remove","path":"/~1"}])",
                   R"({"~1":10})"},
        patch_case{"append", R"({"foo":["bar"]})", R"([{"op":"add","path":"/foo/-","value":["abc"]}])",
                   R"({"foo":["bar",["abc"]]})"},
        patch_case{"copy", R"({"a":{"b":1}})", R"([{"op":"copy","from":"/a","path":"/c"}])",
                   R"({"a":{"b":1},"c":{"b":1}})"},
        patch_case{"remove_gates", R"({"spec":{"schedulingGates":[{"name":"a"}],"x":1}})",
                   R"([{"op":"remove","path":"/spec/schedulingGates"}])", R"({"spec":{"x":1}})"},
        patch_case{"remove_missing", R"({"a":1})", R"([{"op":"remove","path":"/b"}])", nullptr,
                   "operation 0 (remove): the path /b does not exist"},
        patch_case{"leading_zero_index", R"({"a":[1,2]})", R"([{"op":"remove","path":"/a/01"}])",
                   nullptr, "does not exist"},
        patch_case{"index_past_end", R"({"a":[1]})",
                   R"([{"op":"add","path":"/a/2","value":3}])", nullptr, "out of range"},
        patch_case{"move_into_itself", R"({"a":{"b":{}}})",
                   R"([{"op":"move","from":"/a","path":"/a/b/c"}])", nullptr, "into itself"},
        patch_case{"unknown_op", R"({})", R"([{"op":"merge","path":"/a"}])", nullptr,
                   "unknown operation"},
        patch_case{"not_a_pointer", R"({})", R"([{"op":"remove","path":"a"}])", nullptr,
                   "is not a JSON pointer"},
        patch_case{"bad_escape", R"({})", R"([{"op":"remove","path":"/a~2"}])", nullptr,
                   "is not a JSON pointer"},
        patch_case{"missing_value", R"({})", R"([{"op":"add","path":"/a"}])", nullptr,
                   "\"value\" is required"},
        patch_case{"not_a_list", R"({})", R"({"op":"add"})", nullptr, "must be a list"}),
    [](const auto& info) { return std::string(info.param.name); });

// What apimachinery's strategic merge gives for a pod: lists with a merge key merge by it.
class StrategicMergePatch : public ::testing::TestWithParam<patch_case> {};

TEST_P(StrategicMergePatch, MergesAsApimachineryDoes) {
  const auto& c = GetParam();
  check(c, apply_strategic_merge_patch(json::parse(c.target), json::parse(c.patch),
                                       strategic_merge_keys("Pod")));
}

INSTANTIATE_TEST_SUITE_P(
    Pod, StrategicMergePatch,
    ::testing::Values(
        patch_case{"delete_one_gate",
                   R"({"spec":{"schedulingGates":[{"name":"a"},{"name":"b"}]}})",
                   R"({"spec":{"schedulingGates":[{"$patch":"delete","name":"a"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"b"}]}})"},
        patch_case{"clear_gates", R"({"spec":{"schedulingGates":[{"name":"a"}],"x":1}})",
                   R"({"spec":{"schedulingGates":null}})", R"({"spec":{"x":1}})"},
        patch_case{"merge_adds_by_key", R"({"spec":{"schedulingGates":[{"name":"a"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"b"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"a"},{"name":"b"}]}})"},
        patch_case{"replace_directive", R"({"spec":{"schedulingGates":[{"name":"a"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"b"},{"$patch":"replace"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"b"}]}})"},
        patch_case{"containers_merge_by_name",
                   R"({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}})",
                   R"({"spec":{"containers":[{"name":"b","image":"z"}]}})",
                   R"({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"z"}]}})"},
        patch_case{"tolerations_replace",
                   R"({"spec":{"tolerations":[{"key":"a"}]}})",
                   R"({"spec":{"tolerations":[{"key":"b"}]}})",
                   R"({"spec":{"tolerations":[{"key":"b"}]}})"},
        patch_case{"finalizers_union", R"({"metadata":{"finalizers":["a"]}})",
                   R"({"metadata":{"finalizers":["b","a"]}})",
                   R"({"metadata":{"finalizers":["a","b"]}})"},
        patch_case{"delete_from_primitive_list", R"({"metadata":{"finalizers":["a","b"]}})",
                   R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["a"]}})",
                   R"({"metadata":{"finalizers":["b"]}})"},
        patch_case{"set_element_order",
                   R"({"spec":{"schedulingGates":[{"name":"a"},{"name":"b"}]}})",
                   R"({"spec":{"$setElementOrder/schedulingGates":[{"name":"b"},{"name":"a"}]}})",
                   R"({"spec":{"schedulingGates":[{"name":"b"},{"name":"a"}]}})"},
        patch_case{"retain_keys", R"({"spec":{"a":1,"b":2}})",
                   R"({"spec":{"$retainKeys":["b","c"],"c":3}})", R"({"spec":{"b":2,"c":3}})"},
        patch_case{"replace_object", R"({"metadata":{"labels":{"a":"1"}}})",
                   R"({"metadata":{"labels":{"$patch":"replace","b":"2"}}})",
                   R"({"metadata":{"labels":{"b":"2"}}})"},
        patch_case{"delete_object", R"({"metadata":{"labels":{"a":"1"},"name":"p"}})",
                   R"({"metadata":{"labels":{"$patch":"delete"}}})",
                   R"({"metadata":{"name":"p"}})"},
        patch_case{"item_without_key", R"({"spec":{"schedulingGates":[]}})",
                   R"({"spec":{"schedulingGates":[{"x":1}]}})", nullptr,
                   "lacks its merge key name"},
        patch_case{"unknown_directive", R"({})", R"({"$bogus":1})", nullptr,
                   "unknown directive $bogus"},
        patch_case{"not_an_object", R"({})", R"([1])", nullptr, "must be a JSON object"}),
    [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace phalanx::api
