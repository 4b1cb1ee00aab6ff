// workbench-cli as a user runs it: flags, exit codes, one-line errors, --json shapes, the
// README's question, and `inspect` on broken files (an error, never a crash or a hang).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <random>

#include "tests/golden_file.h"
#include "tests/skip_missing.h"
#include "tests/test_models.h"
#include "workbench/backends.h"
#include "workbench/json.h"
#include "workbench/store.h"

namespace {

struct Outcome {
    int exit_code = -1;
    bool crashed = false;
    QByteArray out, err;
};

Outcome run_cli(const QStringList& args, int timeout_ms = 120000,
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WB_CLI_PATH), args);
    p.closeWriteChannel();
    Outcome o;
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        o.crashed = true;
        o.err = "timed out";
        return o;
    }
    o.crashed = p.exitStatus() == QProcess::CrashExit;
    o.exit_code = p.exitCode();
    o.out = p.readAllStandardOutput();
    o.err = p.readAllStandardError();
    return o;
}

bool model_present() { return QFile::exists(QStringLiteral(WB_DEFAULT_MODEL_PATH)); }

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void version_and_help() {
        auto v = run_cli({"--version"});
        QCOMPARE(v.exit_code, 0);
        QVERIFY(v.out.startsWith("workbench-cli "));
        for (const char* cmd : {"run", "chat", "logits", "inspect", "batch", "bench"}) {
            auto h = run_cli({cmd, "--help"});
            QCOMPARE(h.exit_code, 0);
            QVERIFY(h.out.contains("--model") && h.out.contains("--threads"));
        }
    }

    void usage_errors_are_one_line() {
        for (const QStringList& args : {QStringList{"frobnicate"}, QStringList{"run", "--bogus"}, QStringList{"run", "-p", "x", "-t", "abc"},
                                        QStringList{"run", "-p", "x", "--temp", "-1"}, QStringList{"run"}, QStringList{"logits", "-p"}}) {
            auto o = run_cli(args);
            QVERIFY(!o.crashed);
            QCOMPARE(o.exit_code, 2);
            QCOMPARE(o.err.count('\n'), 1);
            QVERIFY(o.out.isEmpty());
        }
    }

    void flags_name_what_is_wrong() {
        // An unknown flag and a flag without its value are named; a repeated flag's last value wins
        // (here a bad one, so the error shows which was taken); --name=value is one argument.
        auto unknown = run_cli({"run", "-p", "x", "--bogus"});
        QCOMPARE(unknown.exit_code, 2);
        QVERIFY2(unknown.err.contains("--bogus") && unknown.err.contains("see --help"), unknown.err.constData());
        auto no_value = run_cli({"logits", "-p"});
        QCOMPARE(no_value.exit_code, 2);
        QVERIFY2(no_value.err.contains("-p"), no_value.err.constData());
        auto repeated = run_cli({"run", "-p", "x", "-t", "2", "--threads=abc"});
        QCOMPARE(repeated.exit_code, 2);
        QVERIFY2(repeated.err.contains("--threads: 'abc' is not an integer"), repeated.err.constData());
        auto flag_value = run_cli({"inspect", "-m", "/nonexistent.gguf", "--json=yes"});
        QCOMPARE(flag_value.exit_code, 2);
        QCOMPARE(flag_value.err.count('\n'), 1);
    }

    void missing_model_names_the_file() {
        auto o = run_cli({"run", "-m", "/nonexistent/model.gguf", "-p", "hi"});
        QCOMPARE(o.exit_code, 1);
        QVERIFY(o.err.contains("/nonexistent/model.gguf"));
        QCOMPARE(o.err.count('\n'), 1);
    }

    // --backend: cpu runs; cuda on a machine (or build) that cannot run it, and a name that is no
    // backend, end in one line giving the reason, never a silent run on the CPU.
    void backend_flag_refuses_what_cannot_run() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("tiny.gguf"));
        QCOMPARE(run_cli({"synth", "--arch", "llama", "--shape", "tiny", "--type", "q8_0", "-o", path}).exit_code, 0);
        const QStringList prompt = {"run", "-m", path, "-p", "t5 t9", "-n", "2", "--temp", "0", "--ignore-eos", "-t", "1"};
        auto cpu = run_cli(prompt + QStringList{"--backend", "cpu"});
        QVERIFY2(cpu.exit_code == 0, cpu.err.constData());
        auto cuda = run_cli(prompt + QStringList{"--backend", "cuda"});
        if (workbench::cuda_devices().ok()) {
            QVERIFY2(cuda.exit_code == 0, cuda.err.constData());   // a machine with a GPU runs it
        } else {
            QCOMPARE(cuda.exit_code, 1);
            QCOMPARE(cuda.err.count('\n'), 1);
            QVERIFY2(cuda.err.contains("no CUDA device: ") || cuda.err.contains("this build has no CUDA backend"), cuda.err.constData());
            QVERIFY(cuda.out.isEmpty());
        }
        auto unknown = run_cli(prompt + QStringList{"--backend", "tpu"});
        QCOMPARE(unknown.exit_code, 1);
        QVERIFY2(unknown.err.contains("unknown backend 'tpu' (cpu or cuda)"), unknown.err.constData());
    }

    // synth writes every architecture the engine runs, as its file declares the tensors: each
    // loads and generates; the same seed writes the same bytes, another seed other weights;
    // an unknown shape or a type whose blocks do not divide the rows is named.
    void synth_writes_models_that_run() {
        QTemporaryDir dir;
        for (const char* arch : {"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma3", "qwen3moe", "gpt-oss", "deepseek2"}) {
            const QString path = dir.filePath(QStringLiteral("%1.gguf").arg(arch));
            auto w = run_cli({"synth", "--arch", arch, "--shape", "tiny", "--type", "q8_0", "-o", path});
            QVERIFY2(w.exit_code == 0, w.err.constData());
            auto r = run_cli({"run", "-m", path, "-p", "t5 t9 t12", "-n", "4", "--temp", "0", "--ignore-eos", "--json", "-t", "1"});
            QVERIFY2(r.exit_code == 0, (QByteArray(arch) + ": " + r.err).constData());
            QCOMPARE(QJsonDocument::fromJson(r.out).object()["tokens"].toArray().size(), 4);
        }
        // gpt-oss as released: the experts MXFP4, the rest another type.
        const QString mxfp4 = dir.filePath("gpt-oss-mxfp4.gguf");
        auto wx = run_cli({"synth", "--arch", "gpt-oss", "--type", "q8_0", "--expert-type", "mxfp4", "-o", mxfp4});
        QVERIFY2(wx.exit_code == 0, wx.err.constData());
        auto inspected = run_cli({"inspect", "-m", mxfp4});
        QVERIFY2(inspected.out.contains("mxfp4 x") && inspected.out.contains("experts:     8 per layer, 2 run per token"), inspected.out.constData());
        auto rx = run_cli({"run", "-m", mxfp4, "-p", "t5 t9 t12", "-n", "4", "--temp", "0", "--ignore-eos", "--json", "-t", "1"});
        QVERIFY2(rx.exit_code == 0, rx.err.constData());
        const QString again = dir.filePath("again.gguf"), other = dir.filePath("other.gguf");
        QCOMPARE(run_cli({"synth", "--arch", "qwen3", "--type", "q8_0", "-o", again}).exit_code, 0);
        QCOMPARE(run_cli({"synth", "--arch", "qwen3", "--type", "q8_0", "--seed", "2", "-o", other}).exit_code, 0);
        auto bytes = [](const QString& p) { QFile f(p); return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray(); };
        QCOMPARE(bytes(again), bytes(dir.filePath("qwen3.gguf")));
        QVERIFY(bytes(other) != bytes(again) && bytes(other).size() == bytes(again).size());
        auto bad = run_cli({"synth", "--shape", "huge", "-o", dir.filePath("x.gguf")});
        QCOMPARE(bad.exit_code, 1);
        QVERIFY2(bad.err.contains("shape 'huge' is not known (tiny, small, llama-1b, llama-3b, llama-8b, qwen3-0.6b, gemma3-270m, qwen3moe-a3b-12l, qwen3moe-a3b-18l, deepseek-v2-lite-8l)"), bad.err.constData());
        bad = run_cli({"synth", "--type", "q4_k", "-o", dir.filePath("x.gguf")});
        QVERIFY2(bad.err.contains("blocks of 256") && bad.err.contains("do not divide"), bad.err.constData());
        QCOMPARE(run_cli({"synth", "--arch", "qwen3"}).exit_code, 2);  // no output named
        // The output as the last argument, as in `synth --arch NAME --shape SHAPE --type TYPE OUT.gguf`.
        const QString positional = dir.filePath("positional.gguf");
        QCOMPARE(run_cli({"synth", "--arch", "qwen3", "--type", "q8_0", positional}).exit_code, 0);
        QCOMPARE(bytes(positional), bytes(again));
        if (model_present()) {
            // A real tokenizer copied in: its vocabulary sizes the embedding, and real text runs.
            const QString path = dir.filePath("vocab.gguf");
            QCOMPARE(run_cli({"synth", "--arch", "llama", "--vocab-from", WB_DEFAULT_MODEL_PATH, "-o", path}).exit_code, 0);
            auto r = run_cli({"run", "-m", path, "-p", "Hello there", "-n", "3", "--temp", "0", "--ignore-eos", "-t", "1"});
            QVERIFY2(r.exit_code == 0, r.err.constData());
            auto inspect = run_cli({"inspect", "-m", path, "--json"});
            QVERIFY2(inspect.out.contains("49152"), inspect.out.left(400).constData());  // SmolLM2's vocabulary
        }
    }

    // Gemma 3 270M: its trained local layers hold their 512-token window, so run --json's KV bytes
    // are the per-layer formula, under the every-layer-global kv_bytes_full.
    void gemma3_kv_bytes_follow_the_per_layer_formula() {
        const QString model = QString::fromStdString(wbtest::find_model("gemma-3-270m-q4_k_m.gguf"));
        if (model.isEmpty()) WB_SKIP_MISSING("gemma-3-270m-q4_k_m.gguf not present: WB_EXTRA_MODELS=gemma3 installer/bootstrap.sh");
        QFile text(QStringLiteral(WB_SOURCE_DIR "/resources/eval/alice_wonderland.txt"));
        QVERIFY(text.open(QIODevice::ReadOnly));
        const QString prompt = QString::fromUtf8(text.read(4000));
        auto o = run_cli({"run", "-m", model, "-p", prompt, "-n", "8", "--temp", "0", "--ignore-eos", "--json", "-t", "2"});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        const auto obj = QJsonDocument::fromJson(o.out).object();
        const auto m = obj["metrics"].toObject();
        const qint64 n = m["context_tokens"].toInteger(), bs = 16, window = 512, row = 2 * 2 * 1 * 256;  // K+V, f16, 1 KV head, 256
        QVERIFY(n > window);
        const qint64 all_blocks = (n + bs - 1) / bs, local_blocks = all_blocks - (n + 1 - window) / bs;
        QCOMPARE(m["kv_bytes"].toInteger(), (3 * all_blocks + 15 * local_blocks) * bs * row);
        QCOMPARE(m["kv_bytes_full"].toInteger(), 18 * all_blocks * bs * row);
        QCOMPARE(obj["attention_runs"].toString(), QStringLiteral("sliding:window=512,sinks=0,layers=0-4+6-10+12-16"));
        auto inspect = run_cli({"inspect", "-m", model});
        QVERIFY2(inspect.out.contains("local layers 0-4+6-10+12-16 (window 512), global 5+11+17"), inspect.out.left(800).constData());
    }

    void run_json_shape_and_answer() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"run", "--chat", "--temp", "0", "-p", "What is the capital of France? Answer in one word.", "--json", "-t", "2"});
        QCOMPARE(o.exit_code, 0);
        QJsonParseError perr;
        auto doc = QJsonDocument::fromJson(o.out, &perr);
        QVERIFY2(perr.error == QJsonParseError::NoError, o.out.constData());
        auto obj = doc.object();
        QVERIFY(obj["text"].toString().contains("Paris"));
        QVERIFY(obj["tokens"].toArray().size() >= 1);
        QVERIFY(obj["prompt_tokens"].isDouble());
        auto m = obj["metrics"].toObject();
        for (const char* key : {"ttft_ms", "prefill_tok_s", "decode_tok_s", "itl_ms_p50", "kv_bytes", "kv_bytes_peak", "kv_bytes_allocated",
                                "kv_bytes_full", "kv_bytes_read_per_token", "context_tokens"})
            QVERIFY2(m.contains(key), key);
        QVERIFY(m["kv_bytes"].toDouble() > 0);
        QCOMPARE(m["kv_bytes"].toDouble(), m["kv_bytes_full"].toDouble());
        QCOMPARE(obj["attention"].toString(), QString("full"));
        QCOMPARE(obj["kv_type"].toString(), QString("f16"));
    }

    // Speculative decoding from the command line: the same greedy tokens with a draft model of
    // the same vocabulary (a synth model carrying SmolLM2's tokenizer), counts in --json; bad
    // settings (exit 2) and bad draft files (exit 1) named in one line.
    // calibrate: every pair of neighbouring layers costed, the cheapest shared within the KV
    // share, and a configuration file that loads the calibrated layout.
    void calibrate_writes_a_configuration_that_loads() {
        QTemporaryDir dir;
        const QString model = dir.filePath("tiny.gguf");
        QCOMPARE(run_cli({"synth", "--arch", "llama", "--shape", "tiny", "--type", "q8_0", "-o", model}).exit_code, 0);
        const int n_layer =
            QJsonDocument::fromJson(run_cli({"inspect", "-m", model, "--json"}).out).object()["hparams"].toObject()["n_layer"].toInt();
        QVERIFY(n_layer >= 3);
        const QString text = dir.filePath("text.txt");
        QFile f(text);
        QVERIFY(f.open(QIODevice::WriteOnly));
        std::mt19937 rng(7);
        for (int i = 0; i < 300; ++i) f.write(QByteArray("t") + QByteArray::number(static_cast<int>(rng() % 200) + 1) + " ");
        f.close();
        const QString config = dir.filePath("calibrated.json");
        auto o = run_cli({"calibrate", "-m", model, "-f", text, "--ctx", "64", "--kv-share", "0.7", "--out", config, "--json", "-t", "1"});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        const QJsonObject result = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(result["pairs"].toArray().size(), n_layer - 1);
        QVERIFY(result["kv_share"].toDouble() <= 0.7);
        const QString attention = result["attention"].toString();
        QVERIFY2(attention.startsWith("cross_layer:group=2,layers="), qPrintable(attention));
        QFile saved(config);
        QVERIFY(saved.open(QIODevice::ReadOnly));
        const QJsonObject savedConfig = QJsonDocument::fromJson(saved.readAll()).object();
        QCOMPARE(savedConfig["attention"].toString(), attention);
        // The file says the layout came from a calibration, and on which text (the GUI shows it).
        const QString by = savedConfig["calibrated_by"].toString();
        QVERIFY2(by.contains("text.txt") && by.contains("0.7"), qPrintable(by));
        auto r = run_cli({"run", "--config", config, "-p", "t5 t9 t12", "-n", "4", "--temp", "0", "--ignore-eos", "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(QJsonDocument::fromJson(r.out).object()["attention"].toString(), attention);
        // A share pairs cannot reach, and a spec that shares no layers, are refused with the reason.
        auto low = run_cli({"calibrate", "-m", model, "-f", text, "--kv-share", "0.3"});
        QCOMPARE(low.exit_code, 2);
        QVERIFY2(low.err.contains("--kv-share"), low.err.constData());
        auto other = run_cli({"calibrate", "-m", model, "-f", text, "--ctx", "64", "--attention", "sliding"});
        QCOMPARE(other.exit_code, 2);
        QVERIFY2(other.err.contains("not a cross_layer spec"), other.err.constData());
    }

    void speculative_decoding_flags_and_draft_files() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString same_vocab = dir.filePath("draft.gguf"), other_vocab = dir.filePath("other.gguf"), garbage = dir.filePath("garbage.gguf");
        QCOMPARE(run_cli({"synth", "--arch", "llama", "--vocab-from", WB_DEFAULT_MODEL_PATH, "-o", same_vocab}).exit_code, 0);
        QCOMPARE(run_cli({"synth", "--arch", "llama", "--shape", "tiny", "-o", other_vocab}).exit_code, 0);
        {
            QFile f(garbage);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("GGUF but not really");
        }
        const QStringList base = {"run", "-p", "Say red, green, blue, red, green, blue, red, green,", "-n", "24", "--temp", "0", "--ignore-eos",
                                  "--json", "-t", "2"};
        const auto plain = run_cli(base);
        QCOMPARE(plain.exit_code, 0);
        const QJsonArray expected = QJsonDocument::fromJson(plain.out).object()["tokens"].toArray();
        for (const QStringList& extra : {QStringList{"--draft", same_vocab, "--draft-max", "4"}, QStringList{"--draft-lookup", "--draft-ngram", "2"}}) {
            const auto o = run_cli(base + extra);
            QVERIFY2(o.exit_code == 0, o.err.constData());
            const QJsonObject obj = QJsonDocument::fromJson(o.out).object();
            QCOMPARE(obj["tokens"].toArray(), expected);
            const QJsonObject m = obj["metrics"].toObject();
            QVERIFY(m["draft_tokens"].toInt() > 0);
            QVERIFY(m["accepted_tokens"].toInt() <= m["draft_tokens"].toInt());
            QVERIFY(m["acceptance_rate"].isDouble());
        }
        QVERIFY(QJsonDocument::fromJson(plain.out).object()["metrics"].toObject()["acceptance_rate"].isNull());
        auto o = run_cli(base + QStringList{"--draft-lookup", "--draft-max", "0"});
        QCOMPARE(o.exit_code, 2);
        QVERIFY2(o.err.contains("--draft-max"), o.err.constData());
        o = run_cli(base + QStringList{"--draft-max", "4"});
        QCOMPARE(o.exit_code, 2);
        QVERIFY2(o.err.contains("need --draft-lookup or --draft"), o.err.constData());
        o = run_cli(base + QStringList{"--draft", other_vocab});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("vocabulary") && o.err.contains("other.gguf"), o.err.constData());
        o = run_cli(base + QStringList{"--draft", garbage});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("draft model") && o.err.contains("garbage.gguf"), o.err.constData());
        QCOMPARE(o.err.count('\n'), 1);
        o = run_cli(base + QStringList{"--draft-lookup", "--attention", "sliding:window=64,sinks=4"});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("roll") && o.err.contains("sliding"), o.err.constData());
    }

    // sweep: a row per configuration as it finishes (a failing one recorded as failed, the sweep
    // going on), a rerun skipping what is there, the map as SVG; a bad list line named.
    void sweep_rows_resume_and_plot() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString list = dir.filePath("configs.txt"), out = dir.filePath("sweep.jsonl"), svg = dir.filePath("map.svg");
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("# a small sweep\nfull\nsliding:window=32,sinks=4   # forgets\nlatent:rank=48 --kv-type q8_0\n");
        }
        const QString db = dir.filePath("history.db");
        // One row first (--db keeps it as a sweep), then the whole list continues it.
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("# a small sweep\nfull\n");
        }
        auto o = run_cli({"sweep", "-f", list, "--ctx", "256", "-t", "2", "-o", out, "--db", db});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("# a small sweep\nfull\nsliding:window=32,sinks=4   # forgets\nlatent:rank=48 --kv-type q8_0\n");
        }
        o = run_cli({"sweep", "-f", list, "--ctx", "256", "-t", "2", "-o", out, "--plot", svg, "--db", db});
        QCOMPARE(o.exit_code, 1);   // a row failed
        QFile rows(out);
        QVERIFY(rows.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = rows.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        const QJsonObject full = QJsonDocument::fromJson(lines[0]).object(), sliding = QJsonDocument::fromJson(lines[1]).object(),
                          latent = QJsonDocument::fromJson(lines[2]).object();
        QCOMPARE(full["status"].toString(), QString("ok"));
        QCOMPARE(full["delta_ppl_pct"].toDouble(), 0.0);
        for (const char* key : {"kv_bytes", "kv_bytes_full", "kv_bytes_read_per_token", "prefill_tok_s", "decode_tok_s", "ppl", "kl", "top1"})
            QVERIFY2(sliding[key].isDouble(), key);
        QVERIFY(sliding["kv_bytes"].toDouble() < full["kv_bytes"].toDouble());
        QVERIFY(sliding["delta_ppl_pct"].toDouble() > 0 && sliding["top1"].toDouble() < 1);
        // Decode time measured beside what the row's bytes predict at the baseline's bandwidth
        // (each run measures its own): the window reads fewer bytes; the last step's parts are kept.
        for (const char* key : {"decode_ms", "decode_ms_predicted", "reference_gb_s"})
            QVERIFY2(full[key].toDouble() > 0 && sliding[key].toDouble() > 0, key);
        auto predicted_bytes = [](const QJsonObject& row) { return row["decode_ms_predicted"].toDouble() * row["reference_gb_s"].toDouble(); };
        QVERIFY(predicted_bytes(sliding) < predicted_bytes(full));
        for (const char* part : {"matmul", "attention", "index"}) QVERIFY2(sliding["decode_step_ms"].toObject()[part].isDouble(), part);
        // Each row names its model file, failed rows too (a file may hold several models' rows).
        QVERIFY2(full["model"].toString().endsWith(".gguf"), lines[0].constData());
        QCOMPARE(sliding["model"], full["model"]);
        QCOMPARE(latent["model"], full["model"]);
        QCOMPARE(latent["status"].toString(), QString("failed"));
        QVERIFY2(latent["error"].toString().contains("multiple of 64"), lines[2].constData());
        {
            workbench::StoreOptions so;
            so.path = db.toStdString();
            so.read_only = true;
            auto store = workbench::Store::open(so);
            QVERIFY2(store.ok(), store.status().message().c_str());
            auto sweeps = (*store)->list_sweeps();
            QVERIFY(sweeps.ok());
            QCOMPARE(sweeps->size(), size_t{1});   // the rerun into the same -o continued it
            QCOMPARE((*sweeps)[0].name, std::string("configs.txt"));
            QCOMPARE((*sweeps)[0].n_rows, 3);
            QCOMPARE((*sweeps)[0].n_failed, 1);
            auto sweep = (*store)->load_sweep((*sweeps)[0].id);
            QVERIFY(sweep.ok());
            for (int i = 0; i < 3; ++i)   // the rows as -o has them, in order
                QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(sweep->rows[static_cast<size_t>(i)])).object()["config"],
                         QJsonDocument::fromJson(lines[i]).object()["config"]);
            auto evals = (*store)->list_evaluations();
            QVERIFY(evals.ok());
            QCOMPARE(evals->size(), size_t{2});   // the rows that ran
            QCOMPARE(evals->back().text_name, std::string("sweep: alice_wonderland.txt"));
            QCOMPARE(evals->back().n_tokens, sliding["scored_tokens"].toInt());
            QVERIFY(evals->back().reference_configuration_id != 0);
        }
        QFile map(svg);
        QVERIFY(map.open(QIODevice::ReadOnly));
        const QByteArray picture = map.readAll();
        QCOMPARE(picture.count("<circle"), 2);
        QVERIFY(picture.contains("Pareto") && picture.contains("sliding:window=32,sinks=4"));
        o = run_cli({"sweep", "-f", list, "--ctx", "256", "-t", "2", "-o", out});
        QCOMPARE(o.exit_code, 0);
        QVERIFY2(o.err.contains("0 measured") && o.err.contains("3 already"), o.err.constData());
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("full --kv-typo q8_0\n");
        }
        o = run_cli({"sweep", "-f", list, "--ctx", "256", "-o", out});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("configuration line 1") && o.err.contains("--kv-typo"), o.err.constData());
    }

    // A latent-attention model in a sweep: its two cache forms side by side (--mla-cache in a
    // list line), the expanded one holding each head's K and V.
    void sweep_compares_latent_attention_forms() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString model = dir.filePath("deepseek2.gguf"), list = dir.filePath("forms.txt"), out = dir.filePath("sweep.jsonl");
        QCOMPARE(run_cli({"synth", "--arch", "deepseek2", "--shape", "small", "--type", "q8_0", "--vocab-from", WB_DEFAULT_MODEL_PATH, "-o", model})
                     .exit_code,
                 0);
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("full\nfull --mla-cache expanded\n");
        }
        auto o = run_cli({"sweep", "-m", model, "-f", list, "--ctx", "256", "-t", "2", "-o", out});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        QFile rows(out);
        QVERIFY(rows.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = rows.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        const QJsonObject latent = QJsonDocument::fromJson(lines[0]).object(), expanded = QJsonDocument::fromJson(lines[1]).object();
        QCOMPARE(latent["mla_cache"].toString(), QStringLiteral("latent"));
        QCOMPARE(expanded["mla_cache"].toString(), QStringLiteral("expanded"));
        // 2 layers: a row of 128 + 32 values a token and layer, against 8 heads × (64 + 32).
        QCOMPARE(latent["kv_bytes_full"].toDouble() * (8 * 96) / 160, expanded["kv_bytes_full"].toDouble());
        {
            QFile f(list);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("full --mla-cache sideways\n");
        }
        o = run_cli({"sweep", "-m", model, "-f", list, "--ctx", "256", "-o", out});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("configuration line 1") && o.err.contains("expected latent or expanded"), o.err.constData());
    }

    // eval --retrieval: a 32-token window beside full attention on the same prompts.
    void eval_retrieval_beside_full_attention() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"eval", "--retrieval", "--ctx", "512", "--lengths", "512", "--depths", "0,50", "--trials", "1",
                          "--attention", "sliding:window=32,sinks=4", "--json", "-t", "2"});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(j["cells"].toArray().size(), 4);   // 2 kinds x 1 length x 2 depths
        const double mine = j["retrieval_accuracy"].toDouble(), base = j["baseline"].toObject()["retrieval_accuracy"].toDouble();
        QVERIFY2(base > mine, o.out.constData());
        QVERIFY(j["baseline_reliable_up_to"].toObject().contains("passkey"));
        // Paired against the baseline on the same 4 prompts: found only there is what separates them.
        const QJsonObject vs = j["vs_baseline"].toObject();
        QCOMPARE(vs["only_baseline"].toInt() - vs["only_this"].toInt(), static_cast<int>(std::lround((base - mine) * 4)));
        QVERIFY(vs["mcnemar_p"].toDouble() > 0.05);   // 4 prompts cannot show any difference
        QCOMPARE(vs["smallest_resolvable"].toDouble(), 1.0);
        QCOMPARE(j["question"].toString(), QStringLiteral("aware"));
        // A press at keep=1 reading each context before its question finds what full attention finds.
        o = run_cli({"eval", "--retrieval", "--ctx", "512", "--lengths", "512", "--depths", "0,50", "--trials", "1",
                     "--attention", "knorm:keep=1", "--question-agnostic", "--json", "-t", "2"});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        const QJsonObject press = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(press["question"].toString(), QStringLiteral("agnostic"));
        QCOMPARE(press["retrieval_accuracy"].toDouble(), base);
        o = run_cli({"eval", "--retrieval", "--depths", "0,200"});
        QCOMPARE(o.exit_code, 2);
        QVERIFY2(o.err.contains("--depths"), o.err.constData());
        o = run_cli({"eval", "--retrieval", "--tasks", "passkey,needle"});
        QCOMPARE(o.exit_code, 2);
        QVERIFY2(o.err.contains("'needle'") && o.err.contains("frequent_words"), o.err.constData());
        // Tasks by name; a task without depth takes a column of its own in the heatmap.
        QTemporaryDir dir;
        const QString svg = dir.filePath("heat.svg");
        o = run_cli({"eval", "--retrieval", "--ctx", "512", "--lengths", "256,512", "--depths", "0,100", "--trials", "1", "--tasks",
                     "variable_tracking,frequent_words", "--attention", "sliding:window=32,sinks=4", "--heatmap", svg, "-t", "2"});
        QVERIFY2(o.exit_code == 0, o.err.constData());
        QVERIFY2(o.out.contains("variable_tracking") && o.out.contains("frequent_words") && o.out.contains("score"), o.out.constData());
        QFile heat(svg);
        QVERIFY(heat.open(QIODevice::ReadOnly));
        const QByteArray picture = heat.readAll();
        // Two panels (the window, full attention) of 2 lengths x (2 depths + "whole").
        QCOMPARE(picture.count("<title>"), 12);
        QVERIFY(picture.contains(">whole<") && picture.contains("sliding:window=32,sinks=4") && picture.contains("baseline"));
        // A heatmap path that cannot be written is named after the figures are out: nothing lost.
        o = run_cli({"eval", "--retrieval", "--ctx", "512", "--lengths", "256", "--depths", "0", "--trials", "1", "--heatmap",
                     dir.filePath("no/such/dir/heat.svg"), "-t", "2"});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.out.contains("retrieval_accuracy") && o.err.contains("no/such/dir/heat.svg"), o.err.constData());
    }

    void run_json_has_the_roofline_split() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"run", "-p", QString("word ").repeated(200), "-n", "4", "--ignore-eos", "--json", "-t", "2"});
        QCOMPARE(o.exit_code, 0);
        const auto roof = QJsonDocument::fromJson(o.out).object()["roofline"].toObject();
        const auto pre = roof["prefill"].toObject(), dec = roof["decode"].toObject();
        QCOMPARE(dec["tokens"].toInt(), 1);
        QVERIFY(pre["tokens"].toInt() > 100);
        // Matmul intensity grows with the tokens per step; decode's is ~2 ops per weight byte
        // of Q4_1 (5 bits a weight → 3.2 ops/B at most).
        const double dec_mm = dec["matmul"].toObject()["ops_per_byte"].toDouble();
        const double pre_mm = pre["matmul"].toObject()["ops_per_byte"].toDouble();
        QVERIFY2(dec_mm > 1.0 && dec_mm < 3.3, qPrintable(QString::number(dec_mm)));
        QVERIFY(pre_mm > 50 * dec_mm);
        // Attention at decode: one query over T keys: about 4·hd·heads ops per 2·hd·kv_heads·2 bytes.
        const double dec_at = dec["attention"].toObject()["ops_per_byte"].toDouble();
        QVERIFY2(dec_at > 0.5 && dec_at < 4, qPrintable(QString::number(dec_at)));
        for (const auto& part : {pre["matmul"], pre["attention"], dec["matmul"], dec["attention"]})
            QVERIFY(part.toObject()["seconds"].toDouble() > 0 && part.toObject()["gops"].toDouble() > 0);
    }

    void variant_flags_reach_the_engine() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"run", "-p", "Once upon a time", "-n", "8", "--ignore-eos", "--json", "-t", "2",
                          "--attention", "cross_layer:group=2", "--kv-type", "k=q8_0,v=q4_0"});
        QCOMPARE(o.exit_code, 0);
        auto obj = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(obj["attention"].toString(), QString("cross_layer:group=2,merge=none"));
        QCOMPARE(obj["kv_type"].toString(), QString("k=q8_0,v=q4_0"));
        auto m = obj["metrics"].toObject();
        // Half the layers stored, at (34 + 18) / (2 · 64) of f16's bytes: the full figure is at the same types.
        QCOMPARE(m["kv_bytes"].toDouble() * 2, m["kv_bytes_full"].toDouble());
        for (const auto& [args, word] : {std::pair{QStringList{"--attention", "sliding:window=0"}, "window"},
                                         {QStringList{"--attention", "bogus"}, "bogus"},
                                         {QStringList{"--kv-type", "q9_9"}, "q9_9"},
                                         {QStringList{"--kv-budget", "0"}, "--kv-budget"}}) {
            auto bad = run_cli(QStringList{"run", "-p", "hi", "-n", "1"} + args);
            QVERIFY2(bad.exit_code != 0 && bad.err.contains(word), bad.err.constData());
            QVERIFY(!bad.crashed);
        }
        // A budget too small for the prompt is an error naming the flag, not a crash.
        auto tight = run_cli({"run", "-p", QString("word ").repeated(200), "-n", "1", "--kv-budget", "1"});
        QCOMPARE(tight.exit_code, 1);
        QVERIFY2(tight.err.contains("--kv-budget"), tight.err.constData());
    }

    void sliding_window_runs_past_the_context() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        // A 128-token context: full attention stops there, a sliding window keeps going with a
        // cache that stays flat (blocks outside sinks + window are released).
        auto full = run_cli({"run", "-p", "Once upon a time", "-n", "300", "--ignore-eos", "--json", "-t", "2", "-c", "128"});
        QCOMPARE(full.exit_code, 0);
        QCOMPARE(QJsonDocument::fromJson(full.out).object()["stop_reason"].toString(), QString("context_full"));
        auto o = run_cli({"run", "-p", "Once upon a time", "-n", "300", "--ignore-eos", "--json", "-t", "2", "-c", "128",
                          "--attention", "sliding:window=64,sinks=4"});
        QCOMPARE(o.exit_code, 0);
        auto obj = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(obj["stop_reason"].toString(), QString("max_tokens"));
        auto m = obj["metrics"].toObject();
        QVERIFY(m["context_tokens"].toInt() > 300);
        // Live: the sinks' block and the blocks from the window's start: at most 7 of 16 tokens.
        QVERIFY(m["kv_bytes_peak"].toDouble() <= 7 * m["kv_bytes_full"].toDouble() / ((m["context_tokens"].toInt() + 15) / 16));
        // The pool is sized for the window, not the context: at the default 8,192-token context a
        // 64-token window reserves (4 + 64 + 256 + 32) tokens' blocks + 2, not 514 blocks.
        auto big = run_cli({"run", "-p", "Hi", "-n", "4", "--json", "-t", "2", "--attention", "sliding:window=64,sinks=4"});
        const double per_block = 16.0 * 23040;
        QCOMPARE(QJsonDocument::fromJson(big.out).object()["metrics"].toObject()["kv_bytes_allocated"].toDouble(), (23 + 2) * per_block);
    }

    void config_file_sets_the_engine_and_flags_override_it() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        QFile f(dir.filePath("config.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"attention\": \"sliding:window=64,sinks=4\", \"kv_types\": \"q8_0\", \"n_ctx\": 512}");
        f.close();
        auto o = run_cli({"run", "-p", "Hi", "-n", "2", "--json", "-t", "2", "--config", f.fileName()});
        QCOMPARE(o.exit_code, 0);
        auto obj = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(obj["attention"].toString(), QString("sliding:window=64,sinks=4"));
        QCOMPARE(obj["kv_type"].toString(), QString("q8_0"));
        auto over = run_cli({"run", "-p", "Hi", "-n", "2", "--json", "-t", "2", "--config", f.fileName(), "--kv-type", "f16"});
        QCOMPARE(QJsonDocument::fromJson(over.out).object()["kv_type"].toString(), QString("f16"));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("{\"atention\": \"full\"}");
        f.close();
        auto bad = run_cli({"run", "-p", "Hi", "--config", f.fileName()});
        QCOMPARE(bad.exit_code, 1);
        QVERIFY(bad.err.contains("config.json") && bad.err.contains("'atention'"));
    }

    void k_quant_weights_fall_back_per_tensor() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"run", "-p", "The capital of France is", "-n", "4", "--temp", "0", "--json", "-t", "2", "--weights", "q4_k"});
        QCOMPARE(o.exit_code, 0);
        QMap<QString, int> types;
        for (const auto& t : QJsonDocument::fromJson(o.out).object()["weight_types"].toArray())
            types[t.toObject()["type"].toString()] = t.toObject()["tensors"].toInt();
        // ffn_down rows (1536) split into 256-blocks; every 576-wide row falls back to q5_0.
        QCOMPARE(types.value("q4_k"), 30);
        QCOMPARE(types.value("q5_0"), 181);
    }

    void undefined_metric_is_null() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"run", "-p", "Hi", "-n", "1", "--ignore-eos", "--json"});
        QCOMPARE(o.exit_code, 0);
        auto m = QJsonDocument::fromJson(o.out).object()["metrics"].toObject();
        QVERIFY(m["decode_tok_s"].isNull());
        QVERIFY(!o.out.contains("nan"));
    }

    void logits_json_shape() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"logits", "-p", "Hello world", "--top", "3", "--json"});
        QCOMPARE(o.exit_code, 0);
        auto obj = QJsonDocument::fromJson(o.out).object();
        auto tokens = obj["tokens"].toArray();
        auto positions = obj["positions"].toArray();
        QCOMPARE(positions.size(), tokens.size());
        QCOMPARE(positions[0].toObject()["top"].toArray().size(), 3);
        auto first = positions[0].toObject()["top"].toArray();
        QVERIFY(first[0].toArray()[1].toDouble() >= first[1].toArray()[1].toDouble());
    }

    // `template` prints what the model's own chat template (the GGUF's, by our Jinja interpreter)
    // makes of a conversation: SmolLM2's ChatML with its default system prompt, the assistant
    // header unless asked not to; bad input named.
    void template_renders_the_models_own_template() {
        if (!model_present()) WB_SKIP_MISSING("default model not present");
        QTemporaryDir dir;
        const QString messages = dir.filePath("messages.json");
        QFile f(messages);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}]})");
        f.close();
        const QByteArray turns = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n";
        const QByteArray system = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n";
        auto o = run_cli({"template", "--messages", messages});
        QCOMPARE(o.exit_code, 0);
        QCOMPARE(o.out, system + turns + "<|im_start|>assistant\n");
        o = run_cli({"template", "--messages", messages, "--no-generation-prompt"});
        QCOMPARE(o.out, system + turns);
        o = run_cli({"template"});
        QCOMPARE(o.exit_code, 2);
        QVERIFY(o.err.contains("--messages FILE is required"));
        QFile bad(dir.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("[{\"role\": ");
        bad.close();
        o = run_cli({"template", "--messages", dir.filePath("bad.json")});
        QCOMPARE(o.exit_code, 1);
        QVERIFY2(o.err.contains("bad.json"), o.err.constData());
        o = run_cli({"template", "--messages", messages, "--vars", "[1]"});
        QCOMPARE(o.exit_code, 2);
        // Gemma 3 270M is the base model: its file carries no template.
        const QString gemma = QString::fromStdString(wbtest::find_model("gemma-3-270m-q4_k_m.gguf"));
        if (!gemma.isEmpty()) {
            o = run_cli({"template", "-m", gemma, "--messages", messages});
            QCOMPARE(o.exit_code, 1);
            QVERIFY2(o.err.contains("carries no chat template"), o.err.constData());
        }
    }

    void inspect_real_model() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"inspect", "--json"});
        QCOMPARE(o.exit_code, 0);
        auto obj = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(obj["arch"].toString(), QString("llama"));
        QCOMPARE(obj["hparams"].toObject()["n_layer"].toInt(), 30);
        QCOMPARE(obj["kv_bytes_per_token"].toInt(), 2 * 30 * 3 * 64 * 2);
        QCOMPARE(obj["tensors"].toArray().size(), 272);
        auto text = run_cli({"inspect"});
        QCOMPARE(text.exit_code, 0);
        QVERIFY(text.out.contains("23040 bytes/token"));
    }

    void bench_json_rows() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"bench", "-p", "16", "-n", "4", "-r", "2", "-t", "2", "--json"});
        QCOMPARE(o.exit_code, 0);
        const auto rows = QJsonDocument::fromJson(o.out).array();
        QCOMPARE(rows.size(), 2);
        const auto pp = rows[0].toObject(), tg = rows[1].toObject();
        QCOMPARE(pp["test"].toString(), QString("pp16"));
        QCOMPARE(tg["test"].toString(), QString("tg4"));
        QCOMPARE(pp["n_prompt"].toInt(), 16);
        QCOMPARE(tg["n_gen"].toInt(), 4);
        for (const auto& row : {pp, tg}) {
            QVERIFY(row["avg_ts"].toDouble() > 0);
            QVERIFY(row["stddev_ts"].toDouble() >= 0);
            QCOMPARE(row["n_threads"].toInt(), 2);
            QCOMPARE(row["backends"].toString(), QString("CPU"));
            QVERIFY(row["model_type"].toString().contains("Q4_1"));
            QVERIFY(row["model_filename"].toString().endsWith(".gguf"));
            QVERIFY(row["model_n_params"].toDouble() > 1e8);
            QVERIFY(row["cpu_features"].toString().contains("AVX2"));
            QVERIFY(!row["kernels"].toString().isEmpty());
            // llama-bench's figures from the same runs: two samples, their mean and spread, and the runs' times.
            const auto samples = row["samples_ts"].toArray();
            QCOMPARE(samples.size(), 2);
            const double a = samples[0].toDouble(), b = samples[1].toDouble();
            QVERIFY(std::fabs(row["avg_ts"].toDouble() - (a + b) / 2) <= 1e-6 * (a + b));
            QVERIFY(std::fabs(row["stddev_ts"].toDouble() - std::fabs(a - b) / std::sqrt(2.0)) <= 1e-6 * (a + b));
            const int tokens = row["n_prompt"].toInt() + row["n_gen"].toInt();
            QVERIFY(std::fabs(row["samples_ns"].toArray()[0].toDouble() - tokens * 1e9 / a) <= 1);
            QVERIFY(!row["test_time"].toString().isEmpty());
            QVERIFY(!row["cpu_info"].toString().isEmpty());  // the CPU by name, as llama-bench says it
        }
        QVERIFY(pp["gb_s"].isNull());
        QVERIFY(tg["gb_s"].toDouble() > 0 && tg["roofline_pct"].toDouble() > 0);
        QCOMPARE(pp["n_depth"].toInt(), 0);
        auto bad = run_cli({"bench", "--weights", "q3_k"});
        QCOMPARE(bad.exit_code, 1);
        QVERIFY(bad.err.contains("q3_k"));
    }

    // llama-bench's -d: the tests run after that many tokens are in the cache, and say so.
    void bench_at_depth() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"bench", "-p", "8", "-n", "4", "-d", "300", "-r", "1", "-t", "2", "--json"});
        QCOMPARE(o.exit_code, 0);
        const auto rows = QJsonDocument::fromJson(o.out).array();
        QCOMPARE(rows.size(), 2);
        for (const auto& row : rows) QCOMPARE(row.toObject()["n_depth"].toInt(), 300);
        QCOMPARE(rows[1].toObject()["test"].toString(), QString("tg4"));
        auto table = run_cli({"bench", "-p", "0", "-n", "2", "-d", "40", "-r", "1", "-t", "2"});
        QCOMPARE(table.exit_code, 0);
        QVERIFY(table.out.contains("tg2 @ d40"));
        // Beside the table: the decode time the bytes read predict at the probed bandwidth, and
        // the measured one with their ratio.
        const QRegularExpression line(R"(decode per token: predicted ([0-9.]+) ms .* measured ([0-9.]+) ms \(([0-9.]+)× predicted\))");
        const QRegularExpressionMatch m = line.match(QString::fromUtf8(table.err));
        QVERIFY2(m.hasMatch(), table.err.constData());
        const double predicted = m.captured(1).toDouble(), measured = m.captured(2).toDouble(), ratio = m.captured(3).toDouble();
        QVERIFY(predicted > 0 && measured > 0);
        QVERIFY(std::abs(ratio - measured / predicted) < 0.02 * ratio + 0.01);
        auto sweep = run_cli({"bench", "-b", "1,2", "-d", "8"});
        QCOMPARE(sweep.exit_code, 2);
        QVERIFY(sweep.err.contains("--n-depth"));
    }

    void bench_batch_sweep_rows() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto o = run_cli({"bench", "-b", "1,4", "-p", "32", "-n", "8", "-t", "2", "--json"});
        QCOMPARE(o.exit_code, 0);
        const auto rows = QJsonDocument::fromJson(o.out).array();
        QCOMPARE(rows.size(), 2);
        for (int i = 0; i < 2; ++i) {
            const auto row = rows[i].toObject();
            QCOMPARE(row["test"].toString(), QString("pp32+tg8"));
            QCOMPARE(row["batch"].toInt(), i == 0 ? 1 : 4);
            QVERIFY(row["pp_tok_s"].toDouble() > 0 && row["tg_tok_s"].toDouble() > 0 && row["tpot_ms_p50"].toDouble() > 0);
            QVERIFY(row["avg_ts"].toDouble() > 0);
            QCOMPARE(row["n_threads"].toInt(), 2);
        }
        // Four sequences hold four times one's KV.
        QCOMPARE(rows[1].toObject()["kv_bytes_peak"].toDouble(), 4 * rows[0].toObject()["kv_bytes_peak"].toDouble());
        for (const char* bad : {"0", "1,,2", "x"}) {
            auto b = run_cli({"bench", "-b", bad});
            QCOMPARE(b.exit_code, 2);
            QVERIFY(b.err.contains("--batch"));
        }
    }

    void batch_runs_a_prompt_file_and_reports_bad_lines() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString prompts = dir.filePath("prompts.jsonl"), results = dir.filePath("results.jsonl");
        QFile f(prompts);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"prompt\": \"What is the capital of France? Answer in one word.\", \"max_tokens\": 8, \"temperature\": 0}\n"
                "{\"messages\": [{\"role\": \"user\", \"content\": \"Name a color.\"}], \"max_tokens\": 6}\n"
                "{not json\n"
                "{\"prompt\": \"Count to three.\", \"n\": 2, \"max_tokens\": 5}\n"
                "{\"max_tokens\": 3}\n");
        f.close();
        auto o = run_cli({"batch", "-f", prompts, "--chat", "--concurrency", "3", "-o", results, "-t", "2", "--json"});
        QVERIFY(!o.crashed);
        QCOMPARE(o.exit_code, 1);   // two lines failed; the rest ran
        QVERIFY2(o.err.contains("prompts.jsonl:3: not valid JSON"), o.err.constData());
        QVERIFY2(o.err.contains("prompts.jsonl:5: needs 'prompt'"), o.err.constData());
        const auto summary = QJsonDocument::fromJson(o.out).object();
        QCOMPARE(summary["completed"].toInt(), 4);
        QCOMPARE(summary["failed"].toInt(), 2);
        QVERIFY(summary["output_throughput"].toDouble() > 0);
        QVERIFY(summary["ttft_ms"].toObject()["p99"].toDouble() >= summary["ttft_ms"].toObject()["p50"].toDouble());
        QFile r(results);
        QVERIFY(r.open(QIODevice::ReadOnly));
        int completions = 0, errors = 0;
        bool paris = false;
        for (const QByteArray& line : r.readAll().split('\n')) {
            if (line.isEmpty()) continue;
            const auto obj = QJsonDocument::fromJson(line).object();
            QVERIFY(obj.contains("line"));
            if (obj.contains("error")) { ++errors; continue; }
            ++completions;
            QVERIFY(obj["n_output_tokens"].toInt() >= 1 && obj["ttft_ms"].toDouble() > 0);
            QCOMPARE(obj["itl_ms"].toArray().size(), obj["n_output_tokens"].toInt() - 1);
            if (obj["line"].toInt() == 1) paris = obj["text"].toString().contains("Paris");
        }
        QCOMPARE(completions, 4);
        QCOMPARE(errors, 2);
        QVERIFY(paris);
        auto missing = run_cli({"batch", "-f", dir.filePath("absent.jsonl")});
        QCOMPARE(missing.exit_code, 1);
        QVERIFY(missing.err.contains("absent.jsonl"));
    }

    void db_records_runs_benchmarks_and_evals_for_history() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString db = dir.filePath("sub/history.db");  // its folder is created
        auto r = run_cli({"run", "--chat", "--temp", "0", "-p", "What is the capital of France? Answer in one word.", "-n", "8",
                          "-t", "2", "--db", db, "--json"});
        QCOMPARE(r.exit_code, 0);
        auto b = run_cli({"bench", "-p", "16", "-n", "4", "-r", "1", "-t", "2", "--db", db, "--json"});
        QCOMPARE(b.exit_code, 0);
        QTemporaryDir text_dir;
        QFile text(text_dir.filePath("t.txt"));
        QVERIFY(text.open(QIODevice::WriteOnly));
        for (int i = 0; i < 40; ++i) text.write("The quick brown fox jumps over the lazy dog. ");
        text.close();
        auto e = run_cli({"eval", "-f", text.fileName(), "--ctx", "128", "--decode", "0", "-t", "2", "--db", db, "--json"});
        QCOMPARE(e.exit_code, 0);
        // eval --json's keys, in order (the GUI's saved evaluations share its builder, less file and decode).
        auto eval_row = workbench::parse_json(e.out.toStdString());
        QVERIFY(eval_row.ok());
        std::vector<std::string> eval_keys;
        for (const auto& [key, value] : eval_row->items()) eval_keys.push_back(key);
        const std::vector<std::string> expected_eval_keys = {
            "file", "ctx", "windows", "tokens_scored", "attention", "kv_type", "weights", "ppl", "ppl_baseline", "delta_ppl_pct",
            "kl_mean", "top1_agreement", "kv_bytes_peak", "kv_bytes_full", "kv_bytes_read_per_token", "kv_bytes_read_full",
            "decode_tok_s"};
        QVERIFY(eval_keys == expected_eval_keys);
        QCOMPARE((*eval_row)["ctx"].get<int>(), 128);

        auto h = run_cli({"history", "--db", db, "--json"});
        QCOMPARE(h.exit_code, 0);
        const auto sessions = QJsonDocument::fromJson(h.out).array();
        QCOMPARE(sessions.size(), 1);
        const auto s = sessions[0].toObject();
        QVERIFY(s["title"].toString().contains("capital of France"));
        const auto runs = s["runs"].toArray();
        QCOMPARE(runs.size(), 1);
        const auto run = runs[0].toObject();
        QCOMPARE(run["generated_tokens"].toInt(), QJsonDocument::fromJson(r.out).object()["tokens"].toArray().size());
        QVERIFY(run["ttft_ms"].toDouble() > 0);
        // Each run names the configuration it ran under (issue 48: the list showed none).
        QVERIFY2(run["config"].toString().startsWith("SmolLM2-135M-Instruct.Q4_1.gguf · full · KV f16"), qPrintable(run["config"].toString()));
        QVERIFY(run_cli({"history", "--db", db}).out.contains("SmolLM2-135M-Instruct.Q4_1.gguf · full · KV f16"));
        // The model file's sha256, as the installer verifies it.
        QCOMPARE(run["model_sha256"].toString(), QString("b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"));
        QCOMPARE(QJsonDocument::fromJson(run_cli({"history", "--db", db, "--search", "Paris", "--json"}).out).array().size(), 1);
        QCOMPARE(QJsonDocument::fromJson(run_cli({"history", "--db", db, "--search", "Berlin", "--json"}).out).array().size(), 0);

        workbench::StoreOptions o;
        o.path = db.toStdString();
        o.read_only = true;
        auto store = workbench::Store::open(o);
        QVERIFY2(store.ok(), store.status().message().c_str());
        auto benches = (*store)->list_benchmarks();
        QVERIFY(benches.ok());
        QCOMPARE(benches->size(), size_t{2});
        auto evals = (*store)->list_evaluations();
        QVERIFY(evals.ok());
        QCOMPARE(evals->size(), size_t{1});
        QVERIFY((*evals)[0].perplexity && *(*evals)[0].perplexity > 1.0);
        QCOMPARE((*evals)[0].text_name, std::string("t.txt"));

        // A database that cannot be opened is a warning: the command's own output still comes.
        QFile junk(dir.filePath("junk.db"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write(QByteArray(8192, 'x'));
        junk.close();
        auto w = run_cli({"run", "-p", "Hello", "-n", "2", "-t", "2", "--db", junk.fileName(), "--json"});
        QCOMPARE(w.exit_code, 0);
        QVERIFY(w.err.contains("warning: history not recorded"));
        QVERIFY(QJsonDocument::fromJson(w.out).isObject());
        auto missing = run_cli({"history", "--db", dir.filePath("absent.db")});
        QCOMPARE(missing.exit_code, 1);
        QVERIFY(missing.err.contains("absent.db"));
    }

    void history_finds_the_database_where_the_gui_does() {
        // The GUI's resolution: $WORKBENCH_HISTORY_DB, else $XDG_DATA_HOME/inference-workbench/.
        QTemporaryDir dir;
        const QString db = dir.filePath("chosen.db");
        {
            workbench::StoreOptions o;
            o.path = db.toStdString();
            auto store = workbench::Store::open(o);
            QVERIFY2(store.ok(), store.status().message().c_str());
            auto config = (*store)->save_configuration(workbench::make_configuration(workbench::EngineConfig{}));
            QVERIFY(config.ok());
            workbench::SessionRecord session;
            session.configuration_id = *config;
            session.title = "kept where the GUI keeps it";
            QVERIFY((*store)->create_session(session).ok());
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("WORKBENCH_HISTORY_DB", db);
        env.insert("XDG_DATA_HOME", dir.filePath("elsewhere"));
        auto h = run_cli({"history", "--json"}, 120000, env);
        QCOMPARE(h.exit_code, 0);
        const auto sessions = QJsonDocument::fromJson(h.out).array();
        QCOMPARE(sessions.size(), 1);
        QCOMPARE(sessions[0].toObject()["title"].toString(), QString("kept where the GUI keeps it"));
        QVERIFY(run_cli({"history", "--help"}, 120000, env).out.contains(db.toUtf8()));

        env.remove("WORKBENCH_HISTORY_DB");
        auto xdg = run_cli({"history"}, 120000, env);
        QCOMPARE(xdg.exit_code, 1);
        QVERIFY2(xdg.err.contains(dir.filePath("elsewhere/inference-workbench/history.db").toUtf8()), xdg.err.constData());
    }

    void json_outputs_are_unchanged() {
        // inspect --json on the default model (its path written as MODEL) and history --json on a
        // database of fixed records: byte for byte as the release before the JSON library change.
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        auto inspect = run_cli({"inspect", "--json"});
        QCOMPARE(inspect.exit_code, 0);
        QByteArray normalized = inspect.out;
        normalized.replace(QByteArray(WB_DEFAULT_MODEL_PATH), "MODEL");
        WB_VERIFY_GOLDEN("cli_inspect.json", normalized.toStdString());

        QTemporaryDir dir;
        const QString db = dir.filePath("fixed.db");
        {
            workbench::StoreOptions o;
            o.path = db.toStdString();
            auto store = workbench::Store::open(o);
            QVERIFY2(store.ok(), store.status().message().c_str());
            workbench::EngineConfig config;
            config.model_path = "/models/SmolLM2 \"quoted\".gguf";
            config.attention = "sliding:window=64,sinks=4";
            auto config_id = (*store)->save_configuration(workbench::make_configuration(config));
            QVERIFY(config_id.ok());
            auto session = (*store)->create_session({0, *config_id, "tab\there \xff", 1764547200000, 1764547260000});
            QVERIFY(session.ok());
            workbench::RunRecord run;
            run.session_id = *session;
            run.configuration_id = *config_id;
            run.started_unix_ms = 1764547201000;
            run.n_tokens_prompt = 12;
            run.provenance.model_sha256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
            auto run_id = (*store)->begin_run(run);
            QVERIFY(run_id.ok());
            run.id = *run_id;
            run.finished_unix_ms = 1764547202500;
            run.n_tokens_generated = 8;
            run.ttft_ms = 25.0;
            run.decode_tok_s = 173.61234567891234;
            run.itl_ms_p50 = 0.0001;
            run.itl_ms_p99 = 123456.789;
            run.kv_bytes = 368640;
            run.stop_reason = "max_tokens";
            QVERIFY((*store)->finish_run(run).ok());
            QVERIFY((*store)->add_message({0, *session, 0, 0, "user", "Say \"hi\"", 1764547201000}).ok());
            QVERIFY((*store)->flush().ok());
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("TZ", "UTC");  // history prints local times
        auto history = run_cli({"history", "--db", db, "--json"}, 120000, env);
        QCOMPARE(history.exit_code, 0);
        WB_VERIFY_GOLDEN("cli_history.json", history.out.toStdString());
    }

    void quantized_copy_still_answers() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QTemporaryDir dir;
        const QString out = dir.path() + "/q8.gguf";
        auto q = run_cli({"quantize", "-o", out, "--type", "q8_0"});
        QCOMPARE(q.exit_code, 0);
        auto info = QJsonDocument::fromJson(run_cli({"inspect", "-m", out, "--json"}).out).object();
        QCOMPARE(info["metadata"].toObject()["general.file_type"].toString(), QString("7"));
        bool has_q8 = false;
        for (const auto& t : info["weight_types"].toArray()) has_q8 = has_q8 || t.toObject()["type"].toString() == "q8_0";
        QVERIFY(has_q8);
        auto r = run_cli({"run", "-m", out, "--chat", "--temp", "0", "-p", "What is the capital of France? Answer in one word.", "--json"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY(QJsonDocument::fromJson(r.out).object()["text"].toString().contains("Paris"));
        auto bad = run_cli({"quantize", "-o", out, "--type", "q2_k"});
        QCOMPARE(bad.exit_code, 1);
        QVERIFY(bad.err.contains("q2_k"));
    }

    void inspect_never_crashes_on_broken_files() {
        if (!model_present()) WB_SKIP_MISSING("default model not present: run installer/bootstrap.sh");
        QFile real(QStringLiteral(WB_DEFAULT_MODEL_PATH));
        QVERIFY(real.open(QIODevice::ReadOnly));
        const QByteArray head = real.read(4 << 20);
        QTemporaryDir dir;
        std::mt19937 rng(7);
        auto check = [&](const QByteArray& bytes, const QString& what) {
            const QString path = dir.path() + "/broken.gguf";
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(bytes);
            f.close();
            auto o = run_cli({"inspect", "-m", path}, 30000);
            QVERIFY2(!o.crashed, qPrintable(what + ": " + o.err));
            QCOMPARE(o.exit_code, 1);
            QVERIFY2(o.err.contains("broken.gguf"), qPrintable(what + ": " + o.err));
        };
        check(QByteArray(), "empty file");
        check(QByteArray("GGUF"), "magic only");
        check(QByteArray(1000, 'x'), "garbage");
        for (int i = 0; i < 12; ++i) check(head.left(static_cast<int>(rng() % head.size())), "truncated copy");
        for (int i = 0; i < 12; ++i) {
            QByteArray m = head;
            for (int k = 0; k < 3; ++k) m[static_cast<int>(rng() % 4096)] = static_cast<char>(rng());
            const QString path = dir.path() + "/flipped.gguf";
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(m);
            f.close();
            auto o = run_cli({"inspect", "-m", path}, 30000);
            QVERIFY2(!o.crashed, o.err.constData());
            QVERIFY(o.exit_code == 0 || o.exit_code == 1);
        }
    }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
