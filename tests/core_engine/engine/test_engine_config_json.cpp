// EngineConfig ⇄ JSON: a round trip keeps every field; unknown or mistyped fields are errors
// naming them; malformed JSON names the byte.
#include <QTest>

#include <tuple>

#include "workbench/config.h"
#include "workbench/json.h"

using namespace workbench;

class TestEngineConfigJson : public QObject {
    Q_OBJECT
private slots:
    void round_trip() {
        EngineConfig c;
        c.model_path = "/models/a \"quoted\" name.gguf";
        c.n_threads = 3;
        c.n_ctx = 4096;
        c.weight_type = "q8_0";
        c.attention = "sliding:window=1020,sinks=4";
        c.kv_types = "k=q8_0,v=q4_0";
        c.kv_budget_bytes = 5ull << 30;
        c.n_seq_max = 8;
        c.calibration_text = "/tmp/cal.txt";
        c.backend = "cuda";
        c.mla_cache = "expanded";
        c.calibrated_by = "workbench-cli calibrate: cross_layer on paradise_lost.txt";
        auto back = engine_config_from_json(engine_config_json(c));
        QVERIFY2(back.ok(), back.status().message().c_str());
        QCOMPARE(back->model_path, c.model_path);
        QCOMPARE(back->n_threads, 3);
        QCOMPARE(back->n_ctx, 4096);
        QCOMPARE(back->weight_type, c.weight_type);
        QCOMPARE(back->attention, c.attention);
        QCOMPARE(back->kv_types, c.kv_types);
        QCOMPARE(back->kv_budget_bytes, c.kv_budget_bytes);
        QCOMPARE(back->n_seq_max, 8);
        QCOMPARE(back->calibration_text, c.calibration_text);
        QCOMPARE(back->backend, std::string("cuda"));
        QCOMPARE(back->mla_cache, std::string("expanded"));
        QCOMPARE(back->calibrated_by, c.calibrated_by);
        // The default backend is left out, so configurations stored before it keep their text.
        QVERIFY(engine_config_json(EngineConfig{}).find("backend") == std::string::npos);
        QVERIFY(engine_config_json(EngineConfig{}).find("mla_cache") == std::string::npos);
        QVERIFY(engine_config_json(EngineConfig{}).find("calibrated_by") == std::string::npos);
    }

    void absent_fields_keep_defaults() {
        auto c = engine_config_from_json("{\"attention\": \"topk:k=64\"}");
        QVERIFY(c.ok());
        QCOMPARE(c->attention, std::string("topk:k=64"));
        QCOMPARE(c->kv_types, EngineConfig{}.kv_types);
        QCOMPARE(c->n_seq_max, 1);
    }

    void errors_name_the_field_or_byte() {
        auto unknown = engine_config_from_json("{\"atention\": \"full\"}");
        QCOMPARE(unknown.status().code(), StatusCode::invalid_argument);
        QVERIFY(unknown.status().message().find("'atention'") != std::string::npos);
        auto type = engine_config_from_json("{\"n_ctx\": \"big\"}");
        QVERIFY(type.status().message().find("'n_ctx' must be") != std::string::npos);
        auto negative = engine_config_from_json("{\"n_threads\": -2}");
        QVERIFY(!negative.ok());
        auto fraction = engine_config_from_json("{\"n_ctx\": 10.5}");
        QVERIFY(!fraction.ok());
        auto malformed = engine_config_from_json("{\"n_ctx\": 10,}");
        QVERIFY(malformed.status().message().find("at byte") != std::string::npos);
        QVERIFY(!engine_config_from_json("[1, 2]").ok());
        QVERIFY(!engine_config_from_json(std::string(200, '[')).ok());   // deep nesting is refused, not a crash
    }

    void check_names_what_cannot_parse() {
        EngineConfig c;
        QVERIFY(check_engine_config(c).ok());
        c.attention = "sliding:window=1020,sinks=4";
        c.kv_types = "k=q8_0,v=q4_0";
        c.weight_type = "q8_0";
        QVERIFY(check_engine_config(c).ok());
        c.attention = "latent:rank=5000";  // the model decides the rank's limit, at load
        QVERIFY(check_engine_config(c).ok());
        for (auto [field, value, named] : {std::tuple{"attention", "sliding:window=abc", "abc"},
                                           std::tuple{"kv", "q9", "q9"}, std::tuple{"weights", "q7_z", "q7_z"},
                                           std::tuple{"backend", "tpu", "unknown backend 'tpu'"},
                                           std::tuple{"mla_cache", "sideways", "expected latent or expanded"}}) {
            EngineConfig bad;
            if (std::string(field) == "attention") bad.attention = value;
            else if (std::string(field) == "kv") bad.kv_types = value;
            else if (std::string(field) == "backend") bad.backend = value;
            else if (std::string(field) == "mla_cache") bad.mla_cache = value;
            else bad.weight_type = value;
            const Status s = check_engine_config(bad);
            QCOMPARE(s.code(), StatusCode::invalid_argument);
            QVERIFY2(s.message().find(named) != std::string::npos, s.message().c_str());
        }
    }

    void json_reader_handles_escapes_and_unicode() {
        auto v = parse_json("{\"s\": \"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\", \"n\": -1.5e2, \"t\": [true, false, null]}");
        QVERIFY2(v.ok(), v.status().message().c_str());
        QCOMPARE((*v)["s"].get<std::string>(), std::string("a\"b\\c\xc3\xa9\xf0\x9f\x98\x80"));
        QCOMPARE((*v)["n"].get<double>(), -150.0);
        QCOMPARE((*v)["t"].size(), size_t{3});
        auto control = parse_json("{\"s\": \"raw\ncontrol\"}");
        QVERIFY(!control.ok());
        QCOMPARE(control.status().code(), StatusCode::invalid_argument);
        QVERIFY2(control.status().message().find("at byte ") == 0, control.status().message().c_str());
        QVERIFY(control.status().message().find("control character") != std::string::npos);
        // Deep nesting parses without recursion; invalid UTF-8 and trailing text are refused.
        const std::string deep = std::string(100000, '[') + std::string(100000, ']');
        QVERIFY(parse_json(deep).ok());
        QVERIFY(!parse_json("\"\xff\"").ok());
        QVERIFY(!parse_json("{} x").ok());
        // A number past double's range is an error, not an exception (found by fuzz_json).
        auto huge = parse_json("666e6666666");
        QVERIFY(!huge.ok());
        QVERIFY2(huge.status().message().find("number overflow") != std::string::npos, huge.status().message().c_str());
        QVERIFY(!engine_config_from_json("{\"n_ctx\": 1e999}").ok());
    }
};

QTEST_APPLESS_MAIN(TestEngineConfigJson)
#include "test_engine_config_json.moc"
