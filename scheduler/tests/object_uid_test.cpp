// Tests of object_uid (scheduler/object_uid.hpp): a UUID held as its bits reads back as its
// text, any other text as given, and both order as text.

#include "scheduler/object_uid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace phalanx::scheduler {
namespace {

TEST(ObjectUid, AnRfc4122UuidIsHeldAsItsBitsAndReadsBackAsItsText) {
  for (std::string text :
       {"0f8fad5b-d9cb-469f-a165-70867728950e", "00000000-0000-0000-8000-000000000000",
        "ffffffff-ffff-ffff-bfff-ffffffffffff"}) {
    object_uid uid(text);
    EXPECT_TRUE(uid.is_compact()) << text;
    EXPECT_FALSE(uid.empty());
    EXPECT_EQ(uid.str(), text);
    EXPECT_EQ(uid.size(), 36u);
    EXPECT_EQ(uid, text);
    object_uid::text_buffer buffer;
    EXPECT_EQ(uid.text(buffer), text);
  }
  EXPECT_EQ(sizeof(object_uid), 16u);
}

TEST(ObjectUid, MakeUuidWritesItsVersionAndVariantOverTheBits) {
  // All ones and all zeros: only the version's nibble and the variant's two bits change.
  EXPECT_EQ(object_uid::make_uuid(~uint64_t{0}, ~uint64_t{0}, 4).str(),
            "ffffffff-ffff-4fff-bfff-ffffffffffff");
  EXPECT_EQ(object_uid::make_uuid(0, 0, 8).str(), "00000000-0000-8000-8000-000000000000");
  auto uid = object_uid::make_uuid(0x0123456789abcdefULL, 0xfedcba9876543210ULL, 4);
  EXPECT_TRUE(uid.is_compact());
  EXPECT_EQ(uid, "01234567-89ab-4def-bedc-ba9876543210");
  EXPECT_EQ(uid, object_uid(uid.str())); // The same value as its text parsed.
}

TEST(ObjectUid, AnyOtherTextIsKeptAsGiven) {
  for (std::string text :
       std::vector<std::string>{"u1", "0F8FAD5B-D9CB-469F-A165-70867728950E", // uppercase
                                "0f8fad5b-d9cb-469f-c165-70867728950e",       // another variant
                                "0f8fad5b-d9cb-469f-a165-70867728950",        // 35 characters
                                "0f8fad5bxd9cb-469f-a165-70867728950e",       // not a hyphen
                                "0f8fad5b-d9cb-469f-a165-70867728950g",       // not a hex digit
                                std::string(300, 'z')}) {
    object_uid uid(text);
    EXPECT_FALSE(uid.is_compact()) << text;
    EXPECT_EQ(uid.str(), text);
    EXPECT_EQ(uid.size(), text.size());
    EXPECT_EQ(uid, text);
    EXPECT_NE(uid, object_uid("0f8fad5b-d9cb-469f-a165-70867728950e"));
  }
  object_uid empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.str(), "");
  EXPECT_EQ(object_uid(""), empty);
  EXPECT_TRUE(object_uid("").empty());
}

TEST(ObjectUid, CopiesMovesAndAssignmentsKeepTheText) {
  object_uid text("a-user-given-uid");
  object_uid uuid("0f8fad5b-d9cb-469f-a165-70867728950e");
  object_uid copy = text;
  EXPECT_EQ(copy, text);
  object_uid moved = std::move(copy);
  EXPECT_TRUE(copy.empty()); // NOLINT(bugprone-use-after-move): moved-from is empty.
  EXPECT_EQ(moved.str(), "a-user-given-uid");
  moved = uuid; // Text to compact: the text's reference is dropped (ASan's leak check).
  EXPECT_EQ(moved, uuid);
  moved = text; // And back.
  EXPECT_EQ(moved.str(), "a-user-given-uid");
  moved = moved; // NOLINT(clang-diagnostic-self-assign-overloaded)
  EXPECT_EQ(moved.str(), "a-user-given-uid");
  {
    std::vector<object_uid> many(100, text);
    EXPECT_TRUE(std::all_of(many.begin(), many.end(), [&](const auto& u) { return u == text; }));
  }
  EXPECT_EQ(text.str(), "a-user-given-uid"); // The copies' references were dropped, not its.
  moved.clear();
  EXPECT_TRUE(moved.empty());
  std::string appended = "podgroup-" + uuid;
  EXPECT_EQ(appended, "podgroup-0f8fad5b-d9cb-469f-a165-70867728950e");
}

// Gangs of equal priority and age are ordered by uid, as text: the bits of two UUIDs must order
// them as their texts do, and a UUID against any other text as the two texts.
TEST(ObjectUid, OrdersAsItsText) {
  std::mt19937_64 random(7);
  auto uuid_text = [&] {
    uint64_t high = random(), low = (random() & ~(3ULL << 62)) | (2ULL << 62);
    char raw[37];
    std::snprintf(raw, sizeof raw, "%08x-%04x-%04x-%04x-%012llx", unsigned(high >> 32),
                  unsigned((high >> 16) & 0xffff), unsigned(high & 0xffff), unsigned(low >> 48),
                  static_cast<unsigned long long>(low & 0xffffffffffffULL));
    return std::string(raw);
  };
  std::vector<std::string> texts = {"", "0", "u1", "zzz", "0f8fad5b-d9cb-469f-a165-70867728950E"};
  for (int i = 0; i < 200; ++i)
    texts.push_back(uuid_text());
  // Neighbours that differ only in the last digit, and in the first.
  texts.push_back("0f8fad5b-d9cb-469f-a165-70867728950e");
  texts.push_back("0f8fad5b-d9cb-469f-a165-70867728950f");
  texts.push_back("1f8fad5b-d9cb-469f-a165-70867728950e");
  for (const auto& a : texts)
    for (const auto& b : texts) {
      object_uid x(a), y(b);
      EXPECT_EQ(x <=> y, a <=> b) << a << " vs " << b;
      EXPECT_EQ(x == y, a == b) << a << " vs " << b;
    }
}

} // namespace
} // namespace phalanx::scheduler
