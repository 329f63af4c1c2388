// The libtorch-free parts of the model: the tensor file layout (round trips and every
// kind of damage), the config, the learning-rate curve and the SFT data lines.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "dragon/model/lr_schedule.h"
#include "dragon/model/model_config.h"
#include "dragon/model/sft_data.h"
#include "dragon/model/tensor_file.h"
#include "dragon/script/script.h"
#include "dragon/support/half.h"

namespace dragon::model {
namespace {

StoredTensor f32_tensor(std::string name, std::vector<int64_t> shape, float first) {
  StoredTensor t;
  t.name = std::move(name);
  t.type = StorageType::kF32;
  t.shape = std::move(shape);
  std::vector<float> values(static_cast<size_t>(t.element_count()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = first + 0.25f * static_cast<float>(i);
  t.data.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  return t;
}

TensorFile sample_file() {
  TensorFile f;
  f.metadata["format"] = "test";
  f.tensors.push_back(f32_tensor("b.weight", {2, 3}, 1.0f));
  f.tensors.push_back(f32_tensor("a.gain", {4}, -2.0f));
  // bf16 storage of values that need rounding: the stored bits are the rounded ones.
  StoredTensor h;
  h.name = "c.bf16";
  h.type = StorageType::kBF16;
  h.shape = {3};
  for (float v : {1.0f, 3.14159f, -1e-3f}) {
    const uint16_t bits = float_to_bf16_bits(v);
    h.data.append(reinterpret_cast<const char*>(&bits), 2);
  }
  f.tensors.push_back(h);
  StoredTensor scalar;
  scalar.name = "d.step";
  scalar.type = StorageType::kI64;
  const int64_t step = 42;
  scalar.data.assign(reinterpret_cast<const char*>(&step), 8);
  f.tensors.push_back(scalar);
  return f;
}

// The header is the 8-byte length and the JSON after it.
std::string header_of(const std::string& bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return bytes.substr(8, n);
}
std::string with_header(const std::string& bytes, const std::string& json) {
  std::string out(8, '\0');
  const uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  uint64_t old = 0;
  std::memcpy(&old, bytes.data(), 8);
  return out + json + bytes.substr(8 + old);
}

void expect_error(const std::string& bytes, const std::string& fragment) {
  try {
    parse_tensor_file(bytes, "ckpt.safetensors");
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const TensorFileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ckpt.safetensors: "), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(TensorFile, RoundTripsBytesShapesTypesAndMetadata) {
  const TensorFile f = sample_file();
  const std::string bytes = serialize_tensor_file(f);
  EXPECT_EQ(header_of(bytes).size() % 8, 0u) << "data starts 8-byte aligned";
  const TensorFile g = parse_tensor_file(bytes, "mem");
  ASSERT_EQ(g.tensors.size(), 4u);
  EXPECT_EQ(g.tensors[0].name, "a.gain") << "written sorted by name";
  for (const StoredTensor& t : f.tensors) {
    const StoredTensor& u = g.at(t.name);
    EXPECT_EQ(u.type, t.type) << t.name;
    EXPECT_EQ(u.shape, t.shape) << t.name;
    EXPECT_EQ(u.data, t.data) << t.name;
  }
  EXPECT_EQ(g.meta("format"), "test");
  EXPECT_TRUE(g.metadata.contains("data_crc32"));
  uint16_t bits = 0;
  std::memcpy(&bits, g.at("c.bf16").data.data() + 2, 2);
  EXPECT_EQ(bf16_bits_to_float(bits), 3.140625f) << "3.14159 rounded to bf16";
  EXPECT_EQ(serialize_tensor_file(g), bytes) << "serialising what was read gives the same bytes";
}

TEST(TensorFile, HeaderIsSafetensorsJson) {
  const std::string json = header_of(serialize_tensor_file(sample_file()));
  EXPECT_NE(json.find(R"("a.gain":{"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("b.weight":{"dtype":"F32","shape":[2,3],"data_offsets":[16,40]})"), std::string::npos);
  EXPECT_NE(json.find(R"("c.bf16":{"dtype":"BF16","shape":[3],"data_offsets":[40,46]})"), std::string::npos);
  EXPECT_NE(json.find(R"("d.step":{"dtype":"I64","shape":[],"data_offsets":[46,54]})"), std::string::npos);
  EXPECT_EQ(json.rfind(R"({"__metadata__":{"format":"test","data_crc32":")", 0), 0u) << json;
}

TEST(TensorFile, EveryTruncationIsAnError) {
  const std::string bytes = serialize_tensor_file(sample_file());
  for (size_t keep = 0; keep < bytes.size(); ++keep) {
    EXPECT_THROW(parse_tensor_file(bytes.substr(0, keep), "cut"), TensorFileError) << "kept " << keep;
  }
  expect_error(bytes.substr(0, 5), "too short");
  expect_error(bytes.substr(0, 20), "runs past the end of the file");
  expect_error(bytes.substr(0, bytes.size() - 3), "past the data section");
}

TEST(TensorFile, DamageIsNamed) {
  const std::string bytes = serialize_tensor_file(sample_file());
  const std::string json = header_of(bytes);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string j = json;
    const size_t at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    j.replace(at, from.size(), to);
    return with_header(bytes, j);
  };
  std::string flipped = bytes;
  flipped.back() ^= 0x10;
  expect_error(flipped, "data CRC-32");
  expect_error(bytes + "xyz", "3 bytes after the last tensor");
  std::string huge = bytes;
  huge[7] = 0x7f;
  expect_error(huge, "implausible");
  expect_error(replaced(R"("dtype":"F32","shape":[4])", R"("dtype":"F31","shape":[4])"), "unknown dtype 'F31'");
  expect_error(replaced(R"("shape":[4])", R"("shape":[5])"), "tensor 'a.gain': 16 bytes of data, its shape [5]");
  expect_error(replaced(R"("data_offsets":[16,40])", R"("data_offsets":[12,36])"), "overlap");
  expect_error(replaced(R"("data_offsets":[0,16])", R"("data_offsets":[16,0])"), "end before they begin");
  expect_error(replaced(R"("shape":[2,3])", R"("shape":[2,-3])"), "sizes >= 0");
  expect_error(replaced(R"(,"data_offsets":[0,16])", ""), "tensor 'a.gain': missing data_offsets");
  expect_error(replaced(R"({"__metadata__")", R"([{"__metadata__")"), "not JSON");
}

TEST(TensorFile, WriterRejectsInconsistentTensors) {
  TensorFile f = sample_file();
  f.tensors[0].shape = {7};
  EXPECT_THROW(serialize_tensor_file(f), TensorFileError);
  f = sample_file();
  f.tensors.push_back(f.tensors[0]);
  EXPECT_THROW(serialize_tensor_file(f), TensorFileError);
}

TEST(TensorFile, FilesOnDiskAndMissingNames) {
  const std::string path = (std::filesystem::temp_directory_path() / "dragon_test_tensor_file.safetensors").string();
  write_tensor_file(path, sample_file());
  const TensorFile g = read_tensor_file(path);
  EXPECT_EQ(g.at("b.weight").data, sample_file().tensors[0].data);
  try {
    g.at("missing", path);
    ADD_FAILURE();
  } catch (const TensorFileError& e) {
    EXPECT_NE(std::string(e.what()).find("no tensor named 'missing'"), std::string::npos);
  }
  std::filesystem::remove(path);
  EXPECT_THROW(read_tensor_file(path), UserError);
}

TEST(TensorFile, Crc32MatchesZlib) {
  EXPECT_EQ(crc32(""), 0u);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926u);  // the standard check value
}

TEST(ModelConfig, ParameterCountByHand) {
  ModelConfig c = ModelConfig::preset("tiny", 100);
  // embedding 100*64; per block 2*64 norms + 4*64*64 attention + 3*64*176 SwiGLU; final norm 64.
  EXPECT_EQ(c.parameter_count(), 100 * 64 + 2 * (2 * 64 + 4 * 64 * 64 + 3 * 64 * 176) + 64);
  // The two shipped sizes fall in the issue's 5M-30M range with the standard vocabulary.
  const int64_t vocab = static_cast<int64_t>(script::Tokenizer::standard().size());
  const int64_t small = ModelConfig::preset("small", vocab).parameter_count();
  const int64_t base = ModelConfig::preset("base", vocab).parameter_count();
  EXPECT_GT(small, 5'000'000);
  EXPECT_LT(small, 15'000'000);
  EXPECT_GT(base, 15'000'000);
  EXPECT_LT(base, 30'000'000);
}

TEST(ModelConfig, JsonRoundTripAndErrors) {
  const ModelConfig c = ModelConfig::preset("small", 2653);
  EXPECT_EQ(ModelConfig::from_json(c.to_json()), c);
  EXPECT_THROW(ModelConfig::preset("huge", 10), UserError);
  ModelConfig bad = c;
  bad.heads = 7;
  EXPECT_THROW(bad.validate(), UserError);
  bad = c;
  bad.heads = 64;  // head_dim 5: odd
  EXPECT_THROW(bad.validate(), UserError);
  EXPECT_THROW(ModelConfig::from_json(R"({"vocab": 10})"), UserError);
  EXPECT_THROW(ModelConfig::from_json("{"), UserError);
}

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  const LrSchedule s{.peak = 1e-3, .floor_ratio = 0.1, .warmup = 10, .total = 110};
  EXPECT_DOUBLE_EQ(s.at(0), 1e-4);
  EXPECT_DOUBLE_EQ(s.at(4), 5e-4);
  EXPECT_DOUBLE_EQ(s.at(9), 1e-3);
  EXPECT_DOUBLE_EQ(s.at(10), 1e-3);
  EXPECT_NEAR(s.at(60), 1e-4 + 0.5 * 9e-4, 1e-15) << "halfway down the cosine";
  EXPECT_NEAR(s.at(110), 1e-4, 1e-15);
  EXPECT_NEAR(s.at(500), 1e-4, 1e-15);
  for (int64_t step = 10; step < 110; ++step) EXPECT_GE(s.at(step), s.at(step + 1)) << step;
  EXPECT_THROW((LrSchedule{.peak = 0}.at(0)), UserError);
  EXPECT_THROW((LrSchedule{.warmup = 10, .total = 5}.at(0)), UserError);
}

TEST(SftData, LinesRoundTripAndBuildPrompts) {
  SftRecord r;
  r.workload = "softmax:shape=16x1024";
  r.script = "gb x_max\ngl b0 2\nsp l1 None 8\n";
  r.prompt = PromptForm::kSpec;
  EXPECT_EQ(parse_sft_record(to_json_line(r), "t", 1), r);
  script::Example e = to_example(r);
  EXPECT_EQ(e.prompt.rfind("softmax:", 0), 0u) << e.prompt;
  r.prompt = PromptForm::kIr;
  e = to_example(r);
  EXPECT_NE(e.prompt.find("x_max"), std::string::npos) << "the IR text names the blocks: " << e.prompt;
  r.task = TaskKind::kRefinement;
  r.existing_script = "gb x_max\n";
  EXPECT_EQ(parse_sft_record(to_json_line(r), "t", 1), r);

  const script::Tokenizer& tok = script::Tokenizer::standard();
  TokenizedExample t = tokenize(tok, to_example(r));
  ASSERT_GT(t.script_start, 0u);
  EXPECT_EQ(t.tokens[t.script_start - 1], tok.special(script::SpecialToken::kScript));
  EXPECT_EQ(tok.decode(std::span(t.tokens).subspan(t.script_start, t.tokens.size() - t.script_start - 1)), r.script);
  EXPECT_EQ(t.tokens.back(), tok.special(script::SpecialToken::kEos));
}

TEST(SftData, BadLinesNameFileAndLine) {
  auto message = [](std::string_view line) {
    try {
      parse_sft_record(line, "data/train.jsonl", 7);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("{").rfind("data/train.jsonl:7: not JSON", 0), 0u) << message("{");
  EXPECT_EQ(message(R"({"task":"construction","workload":"relu"})"), "data/train.jsonl:7: missing 'script'");
  EXPECT_EQ(message(R"({"task":"build","workload":"relu","script":""})"),
            "data/train.jsonl:7: task 'build' is neither 'construction' nor 'refinement'");
  EXPECT_EQ(message(R"({"task":"refinement","workload":"relu","script":"gb compute\n"})"),
            "data/train.jsonl:7: a refinement needs 'existing_script'");
  EXPECT_EQ(message(R"({"task":"construction","workload":"relu","script":"gb  compute\n"})"),
            "data/train.jsonl:7: 'script' is not a canonical script (script::is_canonical)");
  EXPECT_EQ(message(R"({"task":"construction","prompt":"html","workload":"relu","script":""})"),
            "data/train.jsonl:7: prompt 'html' is neither 'ir' nor 'spec'");
}

}  // namespace
}  // namespace dragon::model
