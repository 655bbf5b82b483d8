// The JSONPath engine of phalanxctl (api/ctl/jsonpath.hpp) and the printers over it
// (api/ctl/template_output.hpp). Every expected text below is what kubectl 1.32 printed for the
// same object and template (`kubectl label --local -f obj.json app=web --overwrite -o
// jsonpath=...`, which prints client-side), errors included.

#include "api/ctl/jsonpath.hpp"
#include "api/ctl/template_output.hpp"
#include "scheduler/validation.hpp"

#include <boost/json.hpp>
#include <gtest/gtest.h>

namespace phalanx::api::ctl {
namespace {

namespace json = boost::json;

const json::value& pod() {
  static const json::value v = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web-1", "labels": {"app": "web", "app.kubernetes.io/name": "webby"},
                 "annotations": {"n": "x"}},
    "spec": {
      "containers": [
        {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}, {"containerPort": 443}]},
        {"name": "d", "image": "nginx", "ports": [{"containerPort": 8080}]}],
      "priority": 5, "big": 123456789012345, "f": 1.5, "f2": 2.0, "e": 1e21, "neg": -3,
      "t": true, "nul": null, "emptyl": [], "emptym": {}, "s": "a\"b\n",
      "tolerations": [{"key": "a", "value": "1"}, {"key": "b"}]}})");
  return v;
}

// Mixed types under .a, for filters; .e empty; .n null.
const json::value& mixed() {
  static const json::value v = json::parse(R"({
    "a": [{"x": 1, "y": 1, "s": "a"}, {"x": 1.5, "y": 2, "s": "c"}, {"x": true, "s": "b"},
          {"x": "1", "s": "d"}, {"x": null, "s": "e"}, {"s": "f", "x": false}],
    "a-b": 7, "b": {"x": 1}, "e": [], "n": null,
    "p": [{"s": "a", "p": [1, 2]}, {"s": "b", "p": [2, 3]}, {"s": "c", "p": []}, {"s": "d"}]})");
  return v;
}

struct row {
  const char* text;
  const char* out;    // What is printed; nullptr when it fails.
  const char* error;  // The failure's reason (kubectl's words), when out is nullptr.
};

void check(const json::value& data, const std::vector<row>& rows, bool allow_missing = true) {
  for (const auto& r : rows) {
    SCOPED_TRACE(r.text);
    auto t = jsonpath::parse(r.text);
    if (!t) {
      EXPECT_EQ(r.out, nullptr) << "parse failed: " << t.error().message();
      if (r.out == nullptr) {
        EXPECT_EQ(t.error().message(), r.error);
      }
      continue;
    }
    auto got = t->execute(data, allow_missing);
    if (r.out == nullptr) {
      ASSERT_FALSE(got.ok()) << *got;
      EXPECT_EQ(got.error().message(), r.error);
    } else {
      ASSERT_TRUE(got.ok()) << got.error().message();
      EXPECT_EQ(*got, r.out);
    }
  }
}

TEST(Jsonpath, FieldsIndexesSlicesAndWildcards) {
  check(pod(), {
    {"{.metadata.name}", "web-1", ""},
    {"{$.metadata.name}", "web-1", ""},
    {"{ .metadata.name }", "web-1", ""},
    {"{.kind} {.apiVersion}", "Pod v1", ""},
    {"{.metadata.name}{.metadata.name}", "web-1web-1", ""},
    {"{.spec.containers[*].ports[*].containerPort}", "80 443 8080", ""},
    {"{.spec.containers[*].ports}",
     R"([{"containerPort":80},{"containerPort":443}] [{"containerPort":8080}])", ""},
    {"{.spec.containers[0,1].name}", "c d", ""},
    {"{.spec.containers[1,0].name}", "d c", ""},
    {"{.spec.containers[-1].name}", "d", ""},
    {"{.spec.containers[0:2].name}", "c d", ""},
    {"{.spec.containers[-1:].name}", "d", ""},
    {"{.spec.containers[:1].name}", "c", ""},
    {"{.spec.containers[0:2:2].name}", "c", ""},
    {"{.metadata.labels.*}", "web webby", ""},
    {"{.spec.containers.*}",
     R"({"image":"busybox","name":"c","ports":[{"containerPort":80},{"containerPort":443}]} )"
     R"({"image":"nginx","name":"d","ports":[{"containerPort":8080}]})", ""},
    {"{.spec.containers[*]['name']}", "c d", ""},
    {"{.metadata['name','labels']}",
     R"(web-1 {"app":"web","app.kubernetes.io/name":"webby"})", ""},
    // kubectl reads ['a.b'] as .a.b.
    {"{['metadata.name']}", "web-1", ""},
    {"{['metadata']['name']}", "web-1", ""},
    {R"({.metadata.labels.app\.kubernetes\.io/name})", "webby", ""},
    {R"({.metadata.labels['app\.kubernetes\.io/name']})", "webby", ""},
    {"{..containerPort}", "80 443 8080", ""},
    {"{..ports[0].containerPort}", "80 8080", ""},
    {"{.spec..name}", "c d", ""},
  });
}

TEST(Jsonpath, PrintsValuesAsKubectl) {
  check(pod(), {
    {"{.spec.priority}", "5", ""},
    {"{.spec.big}", "123456789012345", ""},
    {"{.spec.f}", "1.5", ""},
    {"{.spec.f2}", "2", ""},
    {"{.spec.e}", "1e+21", ""},
    {"{.spec.neg}", "-3", ""},
    {"{.spec.t}", "true", ""},
    {"{.spec.nul}", "null", ""},
    {"{.spec.emptyl}", "[]", ""},
    {"{.spec.emptym}", "{}", ""},
    {"{.spec.s}|", "a\"b\n|", ""},
    {"{.spec.t}{.spec.nul}|", "truenull|", ""},
    {"{.spec.containers[0].ports[0]}", R"({"containerPort":80})", ""},
    {"{.metadata.labels}", R"({"app":"web","app.kubernetes.io/name":"webby"})", ""},
    {"{.spec.f} {.spec.f2} {1.5}", "1.5 2 1.5", ""},
    {"{3}", "3", ""},
    {"{true}", "true", ""},
    {R"(a{"\n"}b{"\t"}c)", "a\nb\tc", ""},
    {R"({"\u0041"})", "A", ""},
    {R"({"a b"})", "a b", ""},
    {"{'x'}", "x", ""},
    {"text only", "text only", ""},
    {"}", "}", ""},
    {"{.metadata.name}}", "web-1}", ""},
  });
  // Floats as Go's fmt prints a float64, inside JSON as encoding/json writes it; an integer
  // beyond int64 is a float64 in kubectl.
  const auto numbers = json::parse(
      R"({"a":1234567.0,"b":1e6,"c":0.00001,"d":123456.5,"e":12345678901234567890,)"
      R"("f":9223372036854775807,"h":1.0,"j":1e20,"k":0.1,"l":[1.0,1234567.0,1e-7],)"
      R"("m":99999999999999999999999,"n":3.0e2,"s":"<b>&c"})");
  check(numbers, {
    {"{.a}", "1.234567e+06", ""},
    {"{.b}", "1e+06", ""},
    {"{.c}", "1e-05", ""},
    {"{.d}", "123456.5", ""},
    {"{.e}", "1.2345678901234567e+19", ""},
    {"{.f}", "9223372036854775807", ""},
    {"{.h}", "1", ""},
    {"{.j}", "1e+20", ""},
    {"{.k}", "0.1", ""},
    {"{.l}", "[1,1234567,1e-7]", ""},
    {"{.l[*]}", "1 1.234567e+06 1e-07", ""},
    {"{.m}", "1e+23", ""},
    {"{.n}", "300", ""},
    {"{@}",
     R"({"a":1234567,"b":1000000,"c":0.00001,"d":123456.5,"e":12345678901234567000,)"
     R"("f":9223372036854775807,"h":1,"j":100000000000000000000,"k":0.1,"l":[1,1234567,1e-7],)"
     R"("m":1e+23,"n":300,"s":"\u003cb\u003e\u0026c"})", ""},
  });
}

TEST(Jsonpath, FiltersCompareAsKubectl) {
  check(pod(), {
    {"{.spec.tolerations[?(@.value)].key}", "a", ""},
    {R"({.spec.tolerations[?(@.value=="1")].key})", "a", ""},
    {R"({.spec.tolerations[?(@.key!="a")].key})", "b", ""},
    {"{.spec.containers[?(@.ports[0].containerPort>100)].name}", "d", ""},
    {"{.spec.containers[?(@.ports[0].containerPort<=80)].name}", "c", ""},
    {"{.spec.containers[?(@.ports[0].containerPort>=8080)].name}", "d", ""},
    {"{.spec.containers[?(@.ports[0].containerPort == 80)].name}", "c", ""},
    {R"({.spec.containers[?(@.name<"d")].name})", "c", ""},
    {"{.spec.containers[?(@.name=='d')].name}", "d", ""},
    {"{.spec.containers[?(@.name)].name}", "c d", ""},
    {"{.spec.containers[?(@.nope)].name}", "", ""},
    // A path that fails inside a presence test keeps the element, as in kubectl.
    {"{.spec.containers[?(@.ports[5])].name}", "c d", ""},
    {"{.spec.containers[*].ports[?(@.containerPort==443)]}", R"({"containerPort":443})", ""},
    {R"({.spec.containers[?(@.name=="c")].ports[*].containerPort})", "80 443", ""},
  });
  check(mixed(), {
    {"{.a[?(@.x)].s}", "a c b d e f", ""},
    {"{.a[?(@.y)].s}", "a c", ""},
    {"{.a[?(@)].s}", "a c b d e f", ""},
    {"{.a[?(1==1)].s}", "a c b d e f", ""},
    {"{.a[?(@.s<'b')].s}", "a", ""},
    {R"({.a[?(@.s>"b")].s})", "c d e f", ""},
    {"{.a[?(@.s<@.s)].s}", "", ""},
    {"{.a[?(@.s==@.nope)].s}", "", ""},
    {"{.a[?(@.x==1)].s}", nullptr, "incompatible types for comparison"},
    {"{.a[?(@.x==1.5)].s}", nullptr, "incompatible types for comparison"},
    {"{.a[?(@.x==true)].s}", nullptr, "incompatible types for comparison"},
    {"{.a[?(@.x>0)].s}", nullptr, "incompatible types for comparison"},
    {"{.a[?(@.x==null)].s}", nullptr, "unrecognized identifier null"},
    {"{.p[?(@.p==2)].s}", nullptr, "invalid type for comparison"},
    {"{.p[?(@.p[*]==2)].s}", nullptr, "can only compare one element at a time"},
    {"{.p[?(@.p[0]==2)].s}", nullptr, "array index out of bounds: index 0, length 0"},
    {R"({.a[?(@.s="a")].s})", nullptr, "unrecognized filter operator ="},
    {R"({.a[?(@.s<>"a")].s})", nullptr, "unrecognized filter operator <>"},
    {"{.b[?(@.x==1)]}", nullptr, "map[x:1] is not array or slice and cannot be filtered"},
  });
}

TEST(Jsonpath, RangesNestAndEndEarly) {
  check(pod(), {
    {R"({range .spec.containers[*]}{.name}={.image}{"\n"}{end})", "c=busybox\nd=nginx\n", ""},
    {"{range .spec.containers[*]}[{.name}:{range .ports[*]}{.containerPort},{end}]{end}",
     "[c:80,443,][d:8080,]", ""},
    {"{range .spec.containers[*]}{.name}{end}{.kind}", "cdPod", ""},
    {"{range .spec.emptyl[*]}x{end}y", "y", ""},
    {"{range .spec.containers[*]}{.name}", "cd", ""},  // No {end}: to the end.
    {"{range .metadata.labels}{@},{end}", R"({"app":"web","app.kubernetes.io/name":"webby"},)",
     ""},
    {"{end}", nullptr, "not in range, nothing to end"},
  });
}

TEST(Jsonpath, MissingKeysNullsAndEmptyLists) {
  check(pod(), {
    {"{.nope}", "", ""},
    {"{.spec.nul.x}", "", ""},
    {"{.spec.nul[*]}", "", ""},
    {"{.spec.priority.x}", "", ""},
    {"{.spec.containers.name}", "", ""},
    {"{.spec.containers[*].nope}", "", ""},
    {"{.spec.emptyl[*]}", "", ""},
    {"{.spec.emptyl[0:]}", "", ""},
  });
  // --allow-missing-template-keys=false.
  check(pod(), {
    {"{.nope}", nullptr, "nope is not found"},
    {"{.spec.nul.x}", nullptr, "x is not found"},
    {"{.spec.containers[*].nope}", nullptr, "nope is not found"},
    {"{.spec.nul[*]}", "", ""},
  }, false);
  auto whole = jsonpath::parse("{}");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole->execute(mixed().at("b"), true), R"({"x":1})");
}

TEST(Jsonpath, IndexErrorsAreKubectls) {
  check(pod(), {
    {"{.spec.containers[5]}", nullptr, "array index out of bounds: index 5, length 2"},
    {"{.spec.containers[-3].name}", nullptr, "array index out of bounds: index -1, length 2"},
    {"{.spec.containers[3:].name}", nullptr, "array index out of bounds: index 3, length 2"},
    {"{.spec.containers[2:1].name}", nullptr, "array index out of bounds: index 2, length 2"},
    {"{.spec.containers[::-1].name}", nullptr, "step must be > 0"},
    {"{.spec.emptyl[0]}", nullptr, "array index out of bounds: index 0, length 0"},
    {"{.metadata.labels[*]}", nullptr, "map[string]interface {} is not array or slice"},
    {"{.spec.priority[0]}", nullptr, "int64 is not array or slice"},
    {"{.spec.containers[*].name[0]}", nullptr, "string is not array or slice"},
    {"{.metadata.name b}", nullptr, "unrecognized identifier b"},
  });
  check(mixed(), {
    {"{.a[1:0].s}", nullptr, "starting index 1 is greater than ending index 0"},
    {"{.a[-1:0].s}", nullptr, "starting index 5 is greater than ending index 0"},
    {"{.a[0:10].s}", nullptr, "array index out of bounds: index 9, length 6"},
    {"{.a[1:1].s}", "", ""},
    {"{.a[6:].s}", "", ""},
    {"{.a[0:-1].s}", "a c b d e", ""},
    {"{.a[0:6:2].s}", "a b e", ""},
    {"{.a[-2:].s}", "e f", ""},
    {"{.a[1,].s}", "c a", ""},
    {"{.a[-0].s}", "a", ""},
    {"{.a[]}", R"({"s":"a","x":1,"y":1})", ""},
    {"{.a-b}", "7", ""},
    {"{.e[-1:]}", nullptr, "array index out of bounds: index -1, length 0"},
  });
}

TEST(Jsonpath, ParseErrorsAreKubectls) {
  struct bad {
    const char* text;
    const char* error;
  };
  for (auto b : {
         bad{"{.a", "unclosed action"},
         bad{"{.a[}", "unterminated array"},
         bad{"{.a['b}", "unterminated array"},
         bad{"{.a[x]}", "invalid array index x"},
         bad{R"({.a["b"]})", R"(invalid array index "b")"},
         bad{"{.a[ 0 ]}", "invalid array index  0 "},
         bad{"{.a[1:2:3:4]}", "invalid array index 1:2:3:4"},
         bad{"{.a[?@.x]}", "invalid array index ?@.x"},
         bad{"{.a[?(@.x==)]}", "unrecognized character in action: U+003D '='"},
         bad{R"({.a[?(@.x=="a)]})", "unterminated filter"},
         bad{"{.a[?(@.x)}", "unclosed array expect ]"},
         bad{R"({.a[?(@.s in ("a"))]})", "unclosed array expect ]"},
         bad{R"({.a[?(@.x=="a" && @.y)]})", "unrecognized character in action: U+0026 '&'"},
         bad{R"({.a[?(@.i=~"ng")]})", "unrecognized character in action: U+007E '~'"},
         bad{R"({"abc})", "unterminated quoted string"},
         bad{R"({"\x"})", R"(unquote string "\x" error invalid syntax)"},
         bad{"{*}", "unrecognized character in action: U+002A '*'"},
       }) {
    auto t = jsonpath::parse(b.text);
    ASSERT_FALSE(t.ok()) << b.text;
    EXPECT_EQ(t.error().message(), b.error) << b.text;
  }
}

TEST(Jsonpath, AsJsonPrintsEachActionAsAnArray) {
  auto t = jsonpath::parse(R"(x{.spec.containers[*].name}{.nope}{"\n"})");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t->execute_as_json(pod(), true),
            "[\n    \"x\"\n]\n[\n    \"c\",\n    \"d\"\n]\n[]\n[\n    \"\\n\"\n]\n");
  auto range = jsonpath::parse("{range .spec.containers[*]}{.name}{end}");
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(*range->execute_as_json(pod(), true), "[\n    \"c\"\n]\n[\n    \"d\"\n]\n");
}

TEST(Jsonpath, RelaxedPathsAndQuoting) {
  EXPECT_EQ(*relaxed_jsonpath(".metadata.name"), "{.metadata.name}");
  EXPECT_EQ(*relaxed_jsonpath("metadata.name"), "{.metadata.name}");
  EXPECT_EQ(*relaxed_jsonpath("{.metadata.name}"), "{.metadata.name}");
  EXPECT_EQ(*relaxed_jsonpath("{metadata.name}"), "{.metadata.name}");
  for (auto bad : {"{.a", "{.a}{.b}", ".a}"}) {
    auto r = relaxed_jsonpath(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message(),
              "unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
              "'{name1.name2}' or '{.name1.name2}'");
  }
  // Templates are quoted in messages as the validators quote values (scheduler::go_quote).
  EXPECT_EQ(scheduler::go_quote(R"({.a[?(@.x=="1")]}{"\n"})"),
            R"("{.a[?(@.x==\"1\")]}{\"\\n\"}")");
  EXPECT_EQ(go_value_text(json::parse(R"({"b":[1,"x",{"c":null}],"a":1.5})")),
            "map[a:1.5 b:[1 x map[c:<nil>]]]");
}

// ---- custom-columns and --sort-by

std::vector<json::value> pods() {
  auto items = json::parse(R"([
    {"kind": "Pod", "metadata": {"name": "a-db"},
     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1.5", "memory": "512Mi"}}}]}},
    {"kind": "Pod", "metadata": {"name": "two", "labels": {"app": "web", "tier": "x"}},
     "spec": {"priority": 7, "containers": [
       {"name": "c1", "resources": {"requests": {"cpu": "2", "memory": "100Mi"}},
        "ports": [{"containerPort": 80}, {"containerPort": 81}]},
       {"name": "c2", "image": "nginx"}]}},
    {"kind": "Pod", "metadata": {"name": "web-1", "labels": {"app": "web"}},
     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "3Gi"}}}]}},
    {"kind": "Pod", "metadata": {"name": "web-2", "labels": {"app": "web"}},
     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "200m", "memory": "2Gi"}}}]}},
    {"kind": "Pod", "metadata": {"name": "web-3", "labels": {"app": "web"}},
     "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "300m", "memory": "1Gi"}}}]}}
  ])");
  return {items.as_array().begin(), items.as_array().end()};
}

std::vector<std::string> names(const std::vector<json::value>& items) {
  std::vector<std::string> out;
  for (const auto& i : items)
    out.emplace_back(i.at("metadata").at("name").as_string());
  return out;
}

TEST(CustomColumns, PrintsAsKubectl) {
  auto columns = parse_custom_columns(
      "N:.metadata.name,C:.spec.containers[*].name,P:.spec.containers[*].ports[*].containerPort,"
      "PR:{.spec.priority},PORTS:spec.containers[0].ports,L:.metadata.labels,"
      R"(T:.spec.containers[?(@.name=="c2")].image)");
  ASSERT_TRUE(columns.ok()) << columns.error().message();
  EXPECT_EQ(format_custom_columns(*columns, pods(), false),
            "N       C       P        PR       PORTS                                           L                     T\n"
            "a-db    c       <none>   <none>   <none>                                          <none>                <none>\n"
            "two     c1,c2   80,81    7        [map[containerPort:80] map[containerPort:81]]   map[app:web tier:x]   nginx\n"
            "web-1   c       <none>   <none>   <none>                                          map[app:web]          <none>\n"
            "web-2   c       <none>   <none>   <none>                                          map[app:web]          <none>\n"
            "web-3   c       <none>   <none>   <none>                                          map[app:web]          <none>\n");
  auto lower = parse_custom_columns("name:.metadata.name");
  ASSERT_TRUE(lower.ok());
  EXPECT_EQ(format_custom_columns(*lower, {}, false), "name\n");
  EXPECT_EQ(format_custom_columns(*lower, pods(), true), "a-db\ntwo\nweb-1\nweb-2\nweb-3\n");
  auto file = parse_custom_columns_file("NAME   PRIORITY\n.metadata.name   .spec.priority\n");
  ASSERT_TRUE(file.ok()) << file.error().message();
  EXPECT_EQ(format_custom_columns(*file, {pods()[1]}, false), "NAME   PRIORITY\ntwo    7\n");
}

TEST(CustomColumns, BadSpecsAreKubectlsErrors) {
  struct bad {
    const char* spec;
    const char* error;
  };
  for (auto b : {
         bad{"", "custom-columns format specified but no custom columns given"},
         bad{"NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"},
         bad{"NAME:.metadata.name,",
             "unexpected custom-columns spec: , expected <header>:<json-path-expr>"},
         bad{"A:{.a", "unexpected path string, expected a 'name1.name2' or '.name1.name2' or "
                      "'{name1.name2}' or '{.name1.name2}'"},
         bad{"A:.a[", "unterminated array"},
       }) {
    auto c = parse_custom_columns(b.spec);
    ASSERT_FALSE(c.ok()) << b.spec;
    EXPECT_EQ(c.error().message(), b.error) << b.spec;
  }
  auto one_line = parse_custom_columns_file("NAME\n");
  ASSERT_FALSE(one_line.ok());
  EXPECT_EQ(one_line.error().message(), "expected two lines, saw 1");
}

TEST(SortBy, OrdersAsKubectl) {
  struct row {
    const char* path;
    std::vector<std::string> order;
  };
  for (const auto& r : std::vector<row>{
         {".metadata.name", {"a-db", "two", "web-1", "web-2", "web-3"}},
         {"{.metadata.name}", {"a-db", "two", "web-1", "web-2", "web-3"}},
         // Quantities by amount, not as text.
         {".spec.containers[0].resources.requests.cpu", {"web-1", "web-2", "web-3", "a-db", "two"}},
         {".spec.containers[0].resources.requests.memory",
          {"two", "a-db", "web-3", "web-2", "web-1"}},
         // Items without the field first, in reverse order, as kubectl 1.32 leaves them.
         {".spec.priority", {"web-3", "web-2", "web-1", "a-db", "two"}},
         {".spec.containers[0].ports", {"web-3", "web-2", "web-1", "a-db", "two"}},
         // The first value when there are several.
         {".spec.containers[*].name", {"a-db", "web-1", "web-2", "web-3", "two"}},
       }) {
    auto items = pods();
    auto s = sort_items(items, r.path);
    ASSERT_TRUE(s.ok()) << r.path << ": " << s.message();
    EXPECT_EQ(names(items), r.order) << r.path;
  }
  auto items = pods();
  auto none = sort_items(items, ".nope");
  EXPECT_EQ(none.message(),
            "couldn't find any field with path \"{.nope}\" in the list of objects");
  auto maps = sort_items(items, ".metadata.labels");
  EXPECT_EQ(maps.message(),
            "Field {.metadata.labels} in *unstructured.Unstructured is an unsortable type: "
            "interface, err: unsortable type: map[string]interface {}");
  std::vector<json::value> numbered;
  for (auto n : {"n-9", "n-10", "n-1a"})
    numbered.push_back(json::object{{"metadata", json::object{{"name", n}}}});
  ASSERT_TRUE(sort_items(numbered, "metadata.name").ok());
  EXPECT_EQ(names(numbered), (std::vector<std::string>{"n-10", "n-1a", "n-9"}));
}

} // namespace
} // namespace phalanx::api::ctl
