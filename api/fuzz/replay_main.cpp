// Runs a libFuzzer entry point without libFuzzer (g++ builds, sanitizer builds, `make test`):
//
//   fuzz_json_replay [--mutations N] [--seed S] FILE|DIR...
//
// Replays every input (every file of a directory), then, with --mutations, feeds N inputs made
// by seeded random mutations of them: bit flips, byte changes, inserted and erased runs, copies
// from another input, truncations. Not coverage-guided like `make fuzz` (clang's libFuzzer),
// but it runs on every build, under the sanitizers too, and is reproducible from its seed.
// Exits non-zero when there is nothing to replay; an input that crashes the entry point kills
// the process, and the same seed and count reproduce it.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using input = std::string;

// Bytes that change how the codecs branch: structure, quotes, escapes, YAML indicators,
// quantity suffixes and signs, UTF-8 lead bytes.
constexpr char interesting[] = "{}[]:,\"\\ \n\t-#&*!|>'%@`0123456789.eEkKMGTPi+mu\xc3\xe2\xf0\x80\xff";

input mutate(const input& base, const std::vector<input>& all, std::mt19937_64& rng) {
  input out = base;
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : std::size_t(rng() % n); };
  int steps = 1 + int(rng() % 4);
  for (int s = 0; s < steps; ++s) {
    switch (rng() % 7) {
      case 0:  // Flip one bit.
        if (!out.empty())
          out[pick(out.size())] ^= char(1u << (rng() % 8));
        break;
      case 1:  // Replace a byte with an interesting one.
        if (!out.empty())
          out[pick(out.size())] = interesting[pick(sizeof interesting - 1)];
        break;
      case 2:  // Insert a run of one interesting byte (deep nesting, long numbers).
        out.insert(pick(out.size() + 1), std::size_t(1 + rng() % 64),
                   interesting[pick(sizeof interesting - 1)]);
        break;
      case 3: {  // Erase a run.
        if (out.empty())
          break;
        std::size_t at = pick(out.size());
        out.erase(at, std::size_t(1 + rng() % 16));
        break;
      }
      case 4: {  // Duplicate a run in place.
        if (out.empty())
          break;
        std::size_t at = pick(out.size());
        std::size_t len = std::min<std::size_t>(out.size() - at, 1 + rng() % 32);
        out.insert(at, out.substr(at, len));
        break;
      }
      case 5: {  // Splice in a piece of another input.
        const input& other = all[pick(all.size())];
        if (other.empty())
          break;
        std::size_t from = pick(other.size());
        std::size_t len = std::min<std::size_t>(other.size() - from, 1 + rng() % 64);
        out.insert(pick(out.size() + 1), other.substr(from, len));
        break;
      }
      default:  // Truncate.
        out.resize(pick(out.size() + 1));
        break;
    }
  }
  return out;
}

void run(const input& data) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
}

} // namespace

int main(int argc, char** argv) {
  long long mutations = 0;
  unsigned long long seed = 1;
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--mutations" || arg == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      unsigned long long v = std::strtoull(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0') {
        std::fprintf(stderr, "%s: not a number: %s\n", arg.c_str(), argv[i]);
        return 2;
      }
      if (arg == "--mutations")
        mutations = static_cast<long long>(v);
      else
        seed = v;
      continue;
    }
    std::filesystem::path p = arg;
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no inputs to replay\n");
    return 2;
  }
  std::vector<input> inputs;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    inputs.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    run(inputs.back());
  }
  std::mt19937_64 rng(seed);
  for (long long n = 0; n < mutations; ++n)
    run(mutate(inputs[std::size_t(rng() % inputs.size())], inputs, rng));
  std::printf("replayed %zu inputs and %lld mutations of them (seed %llu)\n", inputs.size(),
              mutations, seed);
  return 0;
}
