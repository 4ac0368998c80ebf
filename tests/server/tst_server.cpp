// The HTTP server (server/): the KoboldAI endpoints and their SSE framing byte for
// byte, OpenAI completions, text equal to the engine's own, the prefix cache (a
// growing prompt reads only what changed, with the same text as a cold server), and
// every bad input, the API key, the queue bound, abort and a client that goes away.
#include "cli_run.h"
#include "client_bodies.h"
#include "server_harness.h"
#include "test_support.h"
#include "tiny_model.h"
#include "verify_ok.h"

#include <baton/engine/generator.h>
#include <baton/engine/model.h>
#include <baton/engine/scoring.h>
#include <baton/engine/tokenizer.h>
#include <baton/server/server.h>
#include <baton/storage/database.h>
#include <baton/storage/prompt_state_store.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <regex>
#include <thread>

using namespace baton;
using json = nlohmann::ordered_json;

namespace {

const char* kPrompt = "The ship was called Tern, and her captain was a quiet woman from the "
                      "north who had sailed every sea there was.";

using baton::test::waitFor;

} // namespace

class TestServer : public QObject {
    Q_OBJECT
    QTemporaryDir m_tmp;
    std::shared_ptr<engine::Model> m_model; // recurrent, T 16, o 4
    std::unique_ptr<engine::ModelQueue> m_queue;

    std::unique_ptr<server::Server> start(server::ServerOptions o = {}) {
        return baton::test::startServer(*m_queue, o);
    }
    static httplib::Client client(const server::Server& s) { return baton::test::httpClient(s); }
    static std::pair<int, json> post(httplib::Client& c, const std::string& path,
                                     const std::string& body,
                                     const httplib::Headers& headers = {}) {
        return baton::test::postJson(c, path, body, headers);
    }

    // The engine's own greedy continuation of a prompt as the server reads it.
    std::vector<engine::GenerationEvent> direct(const std::string& prompt, int tokens) {
        return baton::test::greedyEvents(m_model, prompt, tokens);
    }

    static std::string textOf(const std::vector<engine::GenerationEvent>& events) {
        std::string t;
        for (const auto& e : events)
            t += e.text;
        return t;
    }

private Q_SLOTS:
    void initTestCase() {
        baton::test::initTestProcess();
        QVERIFY(m_tmp.isValid());
        m_model = baton::test::loadRecurrentFixture(m_tmp.filePath("recurrent"));
        QVERIFY(m_model);
        m_queue = std::make_unique<engine::ModelQueue>(m_model);
    }

    void koboldInformation() {
        server::ServerOptions o;
        o.maxContextTokens = 50000;
        auto s = start(o);
        QVERIFY(s);
        auto c = client(*s);
        auto body = [&](const char* path) {
            auto r = c.Get(path);
            return r && r->status == 200 ? r->body : std::string("failed");
        };
        QCOMPARE(body("/api/v1/model"), std::string(R"({"result":"recurrent"})"));
        QCOMPARE(body("/api/v1/info/version"), std::string(R"({"result":"1.2.5"})"));
        const auto version = json::parse(body("/api/extra/version"), nullptr, false);
        QCOMPARE(version["result"], json("KoboldCpp"));
        QCOMPARE(version["version"], json("1.49"));
        QCOMPARE(version["protected"], json(false));
        QCOMPARE(body("/api/v1/config/max_context_length"), std::string(R"({"value":50000})"));
        QCOMPARE(body("/api/extra/true_max_context_length"), std::string(R"({"value":50000})"));
        // A quarter of it, the most KoboldAI Lite's Max Output then offers.
        QCOMPARE(body("/api/v1/config/max_length"), std::string(R"({"value":12500})"));
        auto [status, count] = post(c, "/api/extra/tokencount", R"({"prompt":"Hello world"})");
        QCOMPARE(status, 200);
        // "special" (KoboldCpp's default): the start-of-text token first.
        auto ids = m_model->tokenizer()->encode("Hello world");
        ids.insert(ids.begin(), engine::startOfTextToken(m_model->config()));
        QCOMPARE(count["value"].get<size_t>(), ids.size());
        QCOMPARE(count["ids"].get<std::vector<int32_t>>(), ids);
        auto models = json::parse(body("/v1/models"), nullptr, false);
        QCOMPARE(models["data"][0]["id"].get<std::string>(), std::string("recurrent"));
    }

    // The text is the engine's, and the stream is framed exactly as KoboldCpp frames it.
    void koboldGenerateAndStreamAsTheEngine() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        const auto events = direct(kPrompt, 40);
        QVERIFY(!events.empty());
        const json request = {{"prompt", kPrompt},
                              {"max_length", 40},
                              {"temperature", 0},
                              {"rep_pen", 1},
                              {"unknown_field", "ignored"}};
        auto [status, answer] = post(c, "/api/v1/generate", request.dump());
        QCOMPARE(status, 200);
        QCOMPARE(answer["results"][0]["text"].get<std::string>(), textOf(events));
        QCOMPARE(answer["results"][0]["finish_reason"].get<std::string>(),
                 std::string(events.size() == 40 ? "length" : "stop"));

        std::string expected;
        for (const auto& e : events)
            if (!e.text.empty())
                expected += "event: message\ndata: " +
                            json{{"token", e.text}, {"finish_reason", nullptr}}.dump() + "\n\n";
        expected += std::string("event: message\ndata: {\"token\":\"\",\"finish_reason\":\"") +
                    (events.size() == 40 ? "length" : "stop") + "\"}\n\n";
        auto r = c.Post("/api/extra/generate/stream", request.dump(), "application/json");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QCOMPARE(r->get_header_value("Content-Type"), std::string("text/event-stream"));
        QCOMPARE(r->body, expected);
    }

    // The front ends' own requests (tests/server/client_bodies), sent as they send them,
    // answered in the shape each reads: SillyTavern's KoboldAI Classic (results[0].text;
    // a seed beyond 64 bits reproduces its text), its Text Completion (SSE chunks with
    // choices[0].text and ten alternatives per token, then [DONE]), and KoboldAI Lite
    // (the event regex /^event: (.*)\ndata: (.*)\n\n/ on every event; check and abort by
    // genkey answer JSON). An error carries KoboldCpp's detail.msg beside OpenAI's error.
    void frontEndsAsTheySend() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        const auto body = baton::test::clientBody;
        auto shorter = [](std::string text, int tokens) { // keeps the test quick
            json j = json::parse(text);
            for (const char* f : {"max_length", "max_tokens"})
                if (j.contains(f))
                    j[f] = tokens;
            return j.dump();
        };
        const std::string classic = shorter(body("sillytavern_classic"), 24);
        auto [status, a] = post(c, "/api/v1/generate", classic);
        QCOMPARE(status, 200);
        QVERIFY(a["results"][0]["text"].is_string());
        const std::string deterministic = shorter(body("sillytavern_deterministic"), 24);
        auto [status2, d1] = post(c, "/api/v1/generate", deterministic);
        auto [status3, d2] = post(c, "/api/v1/generate", deterministic);
        QCOMPARE(status2, 200);
        QCOMPARE(status3, 200);
        QCOMPARE(d1["results"][0]["text"], d2["results"][0]["text"]);

        auto streamed = c.Post("/v1/completions", shorter(body("sillytavern_text_completion"), 12),
                               "application/json");
        QVERIFY(streamed);
        QCOMPARE(streamed->status, 200);
        const std::string& sse = streamed->body;
        QVERIFY(sse.size() > 14 && sse.compare(sse.size() - 14, 14, "data: [DONE]\n\n") == 0);
        int withAlternatives = 0;
        for (size_t at = 0; (at = sse.find("data: {", at)) != std::string::npos;) {
            const size_t end = sse.find("\n\n", at);
            const json chunk = json::parse(sse.substr(at + 6, end - at - 6));
            QVERIFY(chunk["choices"][0]["text"].is_string());
            const json& lp = chunk["choices"][0]["logprobs"];
            if (!lp.is_null() && lp["top_logprobs"][0].size() == 10)
                ++withAlternatives;
            at = end;
        }
        QVERIFY(withAlternatives > 0);

        const std::string lite = shorter(body("koboldai_lite"), 16);
        auto events = c.Post("/api/extra/generate/stream", lite, "application/json");
        QVERIFY(events);
        QCOMPARE(events->status, 200);
        const std::regex event("^event: (.*)\ndata: (.*)\n\n");
        std::string rest = events->body;
        int count = 0;
        for (std::smatch m; std::regex_search(rest, m, event); rest = m.suffix().str()) {
            QCOMPARE(m.position(0), 0);
            QCOMPARE(m[1].str(), std::string("message"));
            QVERIFY(json::parse(m[2].str())["token"].is_string());
            ++count;
        }
        QVERIFY(count > 0);
        QVERIFY(rest.empty());
        auto [status4, checked] = post(c, "/api/extra/generate/check", R"({"genkey":"KCPP4821"})");
        QCOMPARE(status4, 200);
        QVERIFY(checked["results"][0]["text"].is_string());
        auto [status5, aborted] = post(c, "/api/extra/abort", R"({"genkey":"KCPP4821"})");
        QCOMPARE(status5, 200);
        QVERIFY(aborted.is_object());
        auto noBody = c.Post("/api/extra/abort", "", "text/plain"); // SillyTavern's
        QVERIFY(noBody);
        QCOMPARE(noBody->status, 200);

        auto [status6, refused] = post(c, "/api/v1/generate", R"({"prompt":"a","max_length":0})");
        QCOMPARE(status6, 400);
        QVERIFY(refused["detail"]["msg"].is_string());
        QCOMPARE(refused["detail"]["msg"], refused["error"]["message"]);
    }

    void stopSequencesAndTrimStop() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        const std::string full = textOf(direct(kPrompt, 40));
        QVERIFY(full.size() > 12);
        const std::string stop = full.substr(6, 3); // met after a few tokens
        const size_t cut = full.find(stop);
        json request = {{"prompt", kPrompt},
                        {"max_length", 40},
                        {"temperature", 0},
                        {"rep_pen", 1},
                        {"stop_sequence", {stop}}};
        auto [status, trimmed] = post(c, "/api/v1/generate", request.dump());
        QCOMPARE(status, 200);
        QCOMPARE(trimmed["results"][0]["text"].get<std::string>(), full.substr(0, cut));
        QCOMPARE(trimmed["results"][0]["finish_reason"].get<std::string>(), std::string("stop"));
        request["trim_stop"] = false;
        auto [status2, kept] = post(c, "/api/v1/generate", request.dump());
        QCOMPARE(status2, 200);
        QCOMPARE(kept["results"][0]["text"].get<std::string>(), full.substr(0, cut) + stop);
    }

    void logprobs() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        auto [status, k] = post(
            c, "/api/v1/generate",
            json{{"prompt", kPrompt}, {"max_length", 6}, {"temperature", 0}, {"logprobs", true}}
                .dump());
        QCOMPARE(status, 200);
        const auto& content = k["results"][0]["logprobs"]["content"];
        QCOMPARE(content.size(), size_t(6));
        for (const auto& t : content) {
            const double lp = t["logprob"].get<double>();
            QVERIFY(lp <= 0);
            QCOMPARE(t["top_logprobs"].size(), size_t(5));
            // Greedy: the chosen token is the most likely one.
            QCOMPARE(t["top_logprobs"][0]["logprob"].get<double>(), lp);
        }
        auto [status2, o] =
            post(c, "/v1/completions",
                 json{{"prompt", kPrompt}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 2}}
                     .dump());
        QCOMPARE(status2, 200);
        const auto& lp = o["choices"][0]["logprobs"];
        QCOMPARE(lp["tokens"].size(), size_t(5));
        QCOMPARE(lp["token_logprobs"].size(), size_t(5));
        QCOMPARE(lp["top_logprobs"][0].size(), size_t(2));
        std::string joined;
        for (const auto& t : lp["tokens"])
            joined += t.get<std::string>();
        QCOMPARE(joined, o["choices"][0]["text"].get<std::string>());
    }

    void openAiCompletions() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        const json request = {{"model", "anything"}, {"prompt", kPrompt}, {"max_tokens", 12},
                              {"temperature", 0.9},  {"seed", 5},         {"n", 2}};
        auto [status, a] = post(c, "/v1/completions", request.dump());
        QCOMPARE(status, 200);
        QCOMPARE(a["object"].get<std::string>(), std::string("text_completion"));
        QVERIFY(a["id"].get<std::string>().rfind("cmpl-", 0) == 0);
        QCOMPARE(a["model"].get<std::string>(), std::string("recurrent"));
        QCOMPARE(a["choices"].size(), size_t(2));
        QCOMPARE(a["choices"][1]["index"].get<int>(), 1);
        QCOMPARE(a["usage"]["completion_tokens"].get<int>(), 24);

        json streamed = request;
        streamed["stream"] = true;
        auto r = c.Post("/v1/completions", streamed.dump(), "application/json");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        QVERIFY(r->body.size() > 20 &&
                r->body.compare(r->body.size() - 14, 14, "data: [DONE]\n\n") == 0);
        std::string texts[2];
        size_t at = 0;
        while ((at = r->body.find("data: {", at)) != std::string::npos) {
            const size_t end = r->body.find("\n\n", at);
            auto chunk = json::parse(r->body.substr(at + 6, end - at - 6));
            QCOMPARE(chunk["object"].get<std::string>(), std::string("text_completion"));
            texts[chunk["choices"][0]["index"].get<int>()] +=
                chunk["choices"][0]["text"].get<std::string>();
            at = end;
        }
        QCOMPARE(texts[0], a["choices"][0]["text"].get<std::string>());
        QCOMPARE(texts[1], a["choices"][1]["text"].get<std::string>());
        QVERIFY(r->body.find("\"usage\"") == std::string::npos); // not asked for

        // stream_options.include_usage: a last chunk with no choices and the usage, for
        // completions and chat alike; "usage": null in the chunks before it.
        for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
            json withUsage = streamed;
            if (std::string(path) == "/v1/chat/completions") {
                withUsage.erase("prompt");
                withUsage["messages"] = {{{"role", "user"}, {"content", kPrompt}}};
            }
            withUsage["stream_options"] = {{"include_usage", true}};
            auto u = c.Post(path, withUsage.dump(), "application/json");
            QVERIFY(u);
            QCOMPARE(u->status, 200);
            const auto chunks = baton::test::sseData(u->body);
            QVERIFY(chunks.size() >= 3);
            const json& last = chunks.back();
            QVERIFY2(last["choices"].empty(), last.dump().c_str());
            QVERIFY(last["usage"]["prompt_tokens"].get<int>() > 0);
            QCOMPARE(last["usage"]["total_tokens"].get<int>(),
                     last["usage"]["prompt_tokens"].get<int>() +
                         last["usage"]["completion_tokens"].get<int>());
            int generated = 0;
            for (size_t i = 0; i + 1 < chunks.size(); ++i) {
                QVERIFY(chunks[i].contains("usage") && chunks[i]["usage"].is_null());
                const json& choice = chunks[i]["choices"][0];
                if (!choice["finish_reason"].is_null())
                    ++generated;
            }
            QCOMPARE(generated, 2); // n = 2: both choices finished before the usage
            if (std::string(path) == "/v1/completions")
                QCOMPARE(last["usage"]["completion_tokens"].get<int>(), 24);
            withUsage["stream_options"] = "yes";
            QCOMPARE(c.Post(path, withUsage.dump(), "application/json")->status, 400);
        }

        auto [status3, echoed] = post(
            c, "/v1/completions",
            json{{"prompt", {kPrompt}}, {"max_tokens", 3}, {"echo", true}, {"stop", "zz"}}.dump());
        QCOMPARE(status3, 200);
        QVERIFY(echoed["choices"][0]["text"].get<std::string>().rfind(kPrompt, 0) == 0);

        // The prompt as token ids (alone or as a batch of one) gives the same text.
        auto [status4, counted] =
            post(c, "/api/extra/tokencount", json{{"prompt", kPrompt}, {"special", false}}.dump());
        QCOMPARE(status4, 200);
        const json ids = counted["ids"];
        QVERIFY(ids.size() > 3);
        for (const json& prompt : {ids, json::array({ids})}) {
            json byIds = request;
            byIds["prompt"] = prompt;
            byIds["n"] = 1;
            byIds["echo"] = true;
            auto [status5, t] = post(c, "/v1/completions", byIds.dump());
            QCOMPARE(status5, 200);
            QCOMPARE(t["choices"][0]["text"].get<std::string>(),
                     kPrompt + a["choices"][0]["text"].get<std::string>());
        }
    }

    // echo with logprobs: the prompt's tokens come first, each with the log-probability
    // the model gives it in the windows the server reads the prompt in (the engine's
    // own scoring of the same tokens), then the generated ones; streamed, the prompt
    // and its scores are the first chunk of each choice.
    void openAiEchoWithLogprobs() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        std::vector<int32_t> ids{engine::startOfTextToken(m_model->config())};
        const auto promptIds = m_model->tokenizer()->encode(kPrompt);
        ids.insert(ids.end(), promptIds.begin(), promptIds.end());
        QVERIFY(ids.size() > 20); // more than one window of 16
        engine::ScoreOptions options;
        options.topAlternatives = 3;
        auto scored = engine::scoreTokens(*m_model, ids, options);
        BATON_VERIFY_OK(scored);
        const auto& expected = scored->perToken;
        QCOMPARE(expected.size(), promptIds.size());

        const json request = {{"prompt", kPrompt},
                              {"max_tokens", 4},
                              {"temperature", 0},
                              {"echo", true},
                              {"logprobs", 3}};
        auto check = [&](const json& lp, size_t generated) {
            QCOMPARE(lp["tokens"].size(), promptIds.size() + generated);
            QCOMPARE(lp["token_logprobs"].size(), lp["tokens"].size());
            std::string joined;
            for (size_t i = 0; i < promptIds.size(); ++i) {
                QCOMPARE(lp["text_offset"][i].get<int64_t>(), int64_t(joined.size()));
                joined += lp["tokens"][i].get<std::string>();
                QVERIFY(std::abs(lp["token_logprobs"][i].get<double>() - expected[i].logprob) <
                        1e-4);
                const json& top = lp["top_logprobs"][i];
                QVERIFY(!top.empty() && top.size() <= 3);
                const std::string best = m_model->tokenizer()->decode({expected[i].top[0].first});
                QVERIFY(top.contains(best));
                QVERIFY(std::abs(top[best].get<double>() - expected[i].top[0].second) < 1e-4);
            }
            QCOMPARE(joined, std::string(kPrompt));
            if (generated > 0)
                QCOMPARE(lp["text_offset"][promptIds.size()].get<int64_t>(),
                         int64_t(std::string(kPrompt).size()));
        };
        auto [status, a] = post(c, "/v1/completions", request.dump());
        QCOMPARE(status, 200);
        const std::string generated = textOf(direct(kPrompt, 4));
        QCOMPARE(a["choices"][0]["text"].get<std::string>(), kPrompt + generated);
        check(a["choices"][0]["logprobs"], 4);

        // Scoring alone: no tokens generated.
        json scoreOnly = request;
        scoreOnly["max_tokens"] = 0;
        auto [status2, b] = post(c, "/v1/completions", scoreOnly.dump());
        QCOMPARE(status2, 200);
        QCOMPARE(b["choices"][0]["text"].get<std::string>(), std::string(kPrompt));
        check(b["choices"][0]["logprobs"], 0);

        json streamed = request;
        streamed["stream"] = true;
        auto r = c.Post("/v1/completions", streamed.dump(), "application/json");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        const size_t end = r->body.find("\n\n");
        QVERIFY(r->body.rfind("data: {", 0) == 0 && end != std::string::npos);
        const json first = json::parse(r->body.substr(6, end - 6));
        QCOMPARE(first["choices"][0]["text"].get<std::string>(), std::string(kPrompt));
        check(first["choices"][0]["logprobs"], 0);
    }

    // A client resends its whole story with every request: only what changed is read,
    // and the text is what a server that never saw the story writes.
    void growingPromptReadsOnlyWhatChanged() {
        auto warm = start();
        auto cold = start();
        QVERIFY(warm && cold);
        auto c = client(*warm);
        std::string story = kPrompt;
        for (int i = 0; i < 11; ++i)
            story += std::string(" ") + kPrompt;
        const int T = 16;
        auto ask = [&](httplib::Client& cl, const std::string& prompt, int tokens) {
            auto [status, a] =
                post(cl, "/v1/completions",
                     json{{"prompt", prompt}, {"max_tokens", tokens}, {"temperature", 0}}.dump());
            return status == 200 ? a : json(nullptr);
        };
        // Nothing generated: the kept generator's tokens are the prompt's, so the next
        // request reads exactly its new tokens.
        auto first = ask(c, story, 0);
        QVERIFY(!first.is_null());
        const int64_t firstTokens = first["usage"]["prompt_tokens"].get<int64_t>();
        QVERIFY(firstTokens > 10 * T);
        auto before = warm->stats().completions;
        story += " The wind rose in the night.";
        auto second = ask(c, story, 20);
        QVERIFY(!second.is_null());
        auto after = warm->stats().completions;
        const int64_t secondTokens = second["usage"]["prompt_tokens"].get<int64_t>();
        QCOMPARE(second["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
                 firstTokens);
        QCOMPARE(after.encodedTokens - before.encodedTokens, secondTokens - firstTokens);

        // Grown by what was generated and more: a saved window state covers all but the
        // last windows.
        auto cl = client(*cold);
        for (int round = 0; round < 3; ++round) {
            auto a = ask(c, story, 20);
            QVERIFY(!a.is_null());
            const std::string text = a["choices"][0]["text"].get<std::string>();
            story += text + " Then they sailed on.";
            before = warm->stats().completions;
            auto grown = ask(c, story, 20);
            after = warm->stats().completions;
            QVERIFY(!grown.is_null());
            const int64_t tokens = grown["usage"]["prompt_tokens"].get<int64_t>();
            const int64_t cached = grown["usage"]["prompt_tokens_details"]["cached_tokens"];
            QVERIFY2(cached >= tokens - 40 - 2 * T,
                     qPrintable(QString("%1 of %2 cached").arg(cached).arg(tokens)));
            QVERIFY(after.encodedTokens - before.encodedTokens <= tokens - cached + T);
            // The same text as a server that reads the whole story.
            auto fresh = ask(cl, story, 20);
            QCOMPARE(grown["choices"][0]["text"], fresh["choices"][0]["text"]);
        }
        // The last 30 characters edited: read from the last state before the edit.
        story = story.substr(0, story.size() - 30) + " and a gull cried over the bay.";
        before = warm->stats().completions;
        auto edited = ask(c, story, 20);
        after = warm->stats().completions;
        const int64_t tokens = edited["usage"]["prompt_tokens"].get<int64_t>();
        QVERIFY(after.encodedTokens - before.encodedTokens <= 30 + 3 * T);
        QVERIFY(edited["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>() >=
                tokens - 30 - 2 * T);
        QCOMPARE(edited["choices"][0]["text"], ask(cl, story, 20)["choices"][0]["text"]);
    }

    // A front end that keeps the story under its context size cuts its front (KoboldAI
    // Lite, SillyTavern), with the memory before it and the author's note a few lines
    // before its end: each request reads only what is new, and writes what a server
    // that reads the whole story from the first cut on writes.
    void trimmedPromptsReadOnlyWhatIsNew() {
        auto warm = start();
        auto cold = start();
        QVERIFY(warm && cold);
        auto c = client(*warm);
        auto cl = client(*cold);
        const QByteArray book =
            baton::test::readFile(baton::test::sharedPath("corpus/books/austen-emma.txt"));
        QVERIFY2(book.size() > 20000, qPrintable(baton::test::missingMessage("corpus/books")));
        std::string story = book.mid(10000, 6000).toStdString();
        const std::string memory = "[Emma Woodhouse is the heroine of this story.]\n";
        const std::string note = "\n[Author's note: it is a fine day in Highbury.]\n";
        const size_t keep = 2000, noteBefore = 200; // characters, as Lite counts
        // The story from `cut` on, the note before its last lines.
        auto prompt = [&](size_t cut) {
            std::string s = story.substr(cut);
            const size_t at = s.size() - noteBefore;
            return s.substr(0, at) + note + s.substr(at);
        };
        auto ask = [&](httplib::Client& client, const std::string& text) {
            auto [status, a] = post(client, "/api/v1/generate",
                                    json{{"memory", memory},
                                         {"prompt", text},
                                         {"max_length", 12},
                                         {"temperature", 0},
                                         {"max_context_length", 8192}}
                                        .dump());
            return status == 200 ? a["results"][0]["text"].get<std::string>() : std::string("!");
        };
        const size_t firstCut = story.size() - keep;
        QVERIFY(ask(c, prompt(firstCut)) != "!");
        for (int round = 0; round < 3; ++round) {
            story += " Mr. Knightley called again that evening, and they talked of Harriet.";
            const auto before = warm->stats().completions;
            const std::string text = ask(c, prompt(story.size() - keep));
            const auto after = warm->stats().completions;
            QVERIFY(text != "!");
            QCOMPARE(after.trimmedMatches - before.trimmedMatches, int64_t(1));
            const int64_t tokens = after.promptTokens - before.promptTokens;
            const int64_t read = after.encodedTokens - before.encodedTokens;
            QVERIFY2(read * 4 < tokens, qPrintable(QString("read %1 of %2").arg(read).arg(tokens)));
            // Every token read once, and the window an imported state re-reads (T).
            const int64_t reused = after.reusedTokens - before.reusedTokens;
            QVERIFY(reused + read >= tokens && reused + read <= tokens + 16);
            // What a server that was sent the story from the first cut on writes.
            QCOMPARE(text, ask(cl, prompt(firstCut)));
        }
        // A new memory is read as sent.
        const auto before = warm->stats().completions;
        auto [status, a] = post(c, "/api/v1/generate",
                                json{{"memory", "[Emma is twenty-one.]\n"},
                                     {"prompt", prompt(story.size() - keep)},
                                     {"max_length", 4}}
                                    .dump());
        QCOMPARE(status, 200);
        QCOMPARE(warm->stats().completions.trimmedMatches, before.trimmedMatches);
    }

    // After a restart, a client that trims its prompt (KoboldAI Lite at its context size)
    // continues the story read before: the new server finds the stream the last one
    // read, and its states, in the database (issue 65: it read all 6,045 tokens again).
    void trimmedPromptsAfterARestart() {
        server::ServerOptions o;
        o.statesDatabase = m_tmp.filePath("trimmed-states.db").toStdString();
        const QByteArray book =
            baton::test::readFile(baton::test::sharedPath("corpus/books/austen-emma.txt"));
        QVERIFY2(book.size() > 20000, qPrintable(baton::test::missingMessage("corpus/books")));
        std::string story = book.mid(30000, 6000).toStdString();
        const size_t keep = 2000; // characters, as Lite counts
        auto ask = [&](const server::Server& srv, const std::string& text) {
            auto c = client(srv);
            auto [status, a] =
                post(c, "/api/v1/generate",
                     json{{"prompt", text}, {"max_length", 12}, {"temperature", 0}}.dump());
            return status == 200 ? a["results"][0]["text"].get<std::string>() : std::string("!");
        };
        const size_t firstCut = story.size() - keep;
        {
            auto first = start(o);
            QVERIFY(first);
            QVERIFY(ask(*first, story.substr(firstCut)) != "!");
        } // stopped: its memory is gone
        story += " Mr. Knightley called again that evening, and they talked of Harriet.";
        auto second = start(o);
        auto cold = start();
        QVERIFY(second && cold);
        const std::string text = ask(*second, story.substr(story.size() - keep));
        QVERIFY(text != "!");
        const auto stats = second->stats().completions;
        QCOMPARE(stats.trimmedMatches, int64_t(1));
        QCOMPARE(stats.savedHits, int64_t(1));
        QVERIFY2(
            stats.encodedTokens * 4 < stats.promptTokens,
            qPrintable(QString("read %1 of %2").arg(stats.encodedTokens).arg(stats.promptTokens)));
        // What a server sent the story from the first cut on writes.
        QCOMPARE(text, ask(*cold, story.substr(firstCut)));
    }

    // Prompt states saved in the database outlast the server: a new server on the same
    // database reads only what follows the longest saved prefix, and writes what a
    // server that reads the whole prompt writes.
    void savedStatesOutlastTheServer() {
        server::ServerOptions o;
        o.statesDatabase = m_tmp.filePath("states.db").toStdString();
        std::string story = kPrompt;
        for (int i = 0; i < 7; ++i)
            story += std::string(" ") + kPrompt;
        auto ask = [&](const server::Server& srv, const std::string& prompt) {
            auto c = client(srv);
            auto [status, a] =
                post(c, "/v1/completions",
                     json{{"prompt", prompt}, {"max_tokens", 12}, {"temperature", 0}}.dump());
            return status == 200 ? a : json(nullptr);
        };
        {
            auto first = start(o);
            QVERIFY(first);
            QVERIFY(!ask(*first, story).is_null());
        } // stopped: its memory is gone
        auto db = storage::Database::open(o.statesDatabase);
        BATON_VERIFY_OK(db);
        QVERIFY(*(*db)->promptStates().totalBytes() > 0);
        db->reset();
        story += " The wind rose in the night.";
        auto second = start(o);
        auto cold = start(); // memory only, nothing saved: reads everything
        QVERIFY(second && cold);
        const json a = ask(*second, story);
        QVERIFY(!a.is_null());
        const int64_t tokens = a["usage"]["prompt_tokens"].get<int64_t>();
        const int64_t cached = a["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>();
        QVERIFY2(cached >= tokens - 10 - 2 * 16,
                 qPrintable(QString("%1 of %2 cached").arg(cached).arg(tokens)));
        QCOMPARE(second->stats().completions.savedHits, int64_t(1));
        QCOMPARE(a["choices"][0]["text"], ask(*cold, story)["choices"][0]["text"]);
        QCOMPARE(cold->stats().completions.savedHits, int64_t(0));
        // A database that cannot be opened does not fail requests: memory only.
        server::ServerOptions bad;
        bad.statesDatabase = m_tmp.filePath("no-such-folder/states.db").toStdString();
        QVERIFY(QFile::exists(m_tmp.path()));
        QVERIFY(baton::test::writeFile(m_tmp.filePath("no-such-folder"), "a file, not a folder"));
        auto degraded = start(bad);
        QVERIFY(degraded);
        QVERIFY(!ask(*degraded, story).is_null());
    }

    // A client that keeps its own text and not what was generated: the kept generator
    // goes back to the end of its prompt and reads only the new tokens (the window has
    // room: the fixture's T is 128).
    // baton-cli generate and the server read a prompt the same way (start-of-text, then
    // the prompt): the same prompt, settings and seed give the same text.
    void theCliAndTheServerAgree() {
        auto s = start();
        QVERIFY(s);
        auto c = client(*s);
        const std::string prompt = "The gulls followed the ship";
        for (const char* temperature : {"0", "0.9"}) {
            const auto cli = baton::test::cli({"generate",
                                               "--model",
                                               m_tmp.filePath("recurrent"),
                                               "--prompt",
                                               QString::fromStdString(prompt),
                                               "--temperature",
                                               temperature,
                                               "--top-p",
                                               "1",
                                               "--top-k",
                                               "0",
                                               "--repetition-penalty",
                                               "1.2",
                                               "--seed",
                                               "7",
                                               "--max-tokens",
                                               "16",
                                               "--ignore-eos",
                                               "--json",
                                               "--quiet"});
            QVERIFY2(cli.exitCode == 0, cli.err.constData());
            const json done = json::parse(cli.out.trimmed().split('\n').last().toStdString());
            const auto [status, answer] = post(c, "/v1/completions",
                                               json{{"prompt", prompt},
                                                    {"max_tokens", 16},
                                                    {"temperature", std::stod(temperature)},
                                                    {"top_p", 1},
                                                    {"top_k", 0},
                                                    {"repetition_penalty", 1.2},
                                                    {"seed", 7},
                                                    {"ignore_eos", true}}
                                                   .dump());
            QCOMPARE(status, 200);
            QCOMPARE(QString::fromStdString(answer["choices"][0]["text"].get<std::string>()),
                     QString::fromStdString(done["text"].get<std::string>()));
        }
    }

    void rewindsToTheEndOfThePrompt() {
        auto baseline = engine::Model::load(baton::test::fixture());
        BATON_VERIFY_OK(baseline);
        engine::ModelQueue host(*baseline);
        server::ServerOptions o;
        o.port = 0;
        server::Server warm(host, o), cold(host, o);
        BATON_VERIFY_OK(warm.start());
        BATON_VERIFY_OK(cold.start());
        auto ask = [](const server::Server& s, const std::string& prompt) {
            auto c = client(s);
            return post(c, "/v1/completions",
                        json{{"prompt", prompt}, {"max_tokens", 20}, {"temperature", 0}}.dump())
                .second;
        };
        std::string story = kPrompt;
        const auto first = ask(warm, story);
        const int64_t firstTokens = first["usage"]["prompt_tokens"].get<int64_t>();
        story += " The gulls followed the ship.";
        const auto before = warm.stats().completions;
        const auto second = ask(warm, story);
        const auto after = warm.stats().completions;
        const int64_t secondTokens = second["usage"]["prompt_tokens"].get<int64_t>();
        QVERIFY(secondTokens + 20 < 128);
        QCOMPARE(second["usage"]["prompt_tokens_details"]["cached_tokens"].get<int64_t>(),
                 firstTokens);
        QCOMPARE(after.encodedTokens - before.encodedTokens, secondTokens - firstTokens);
        QCOMPARE(second["choices"][0]["text"], ask(cold, story)["choices"][0]["text"]);
    }

    void badRequestsGetJsonErrors() {
        server::ServerOptions o;
        o.maxBodyBytes = 4096;
        o.maxGenerateTokens = 100;
        auto s = start(o);
        QVERIFY(s);
        auto c = client(*s);
        const std::string invalidUtf8 = std::string("{\"prompt\":\"a\xff\xfe b\"}");
        const std::vector<std::tuple<std::string, std::string, int>> cases = {
            {"/api/v1/generate", "{not json", 400},
            {"/api/v1/generate", "[1,2]", 400},
            {"/api/v1/generate", "", 400},
            {"/api/v1/generate", R"({"max_length":5})", 400},
            {"/api/v1/generate", R"({"prompt":7})", 400},
            {"/api/v1/generate", R"({"prompt":"a","max_length":0})", 400},
            {"/api/v1/generate", R"({"prompt":"a","logprobs":"10"})", 400},
            {"/v1/chat/completions", R"({"messages":"hi"})", 400},
            {"/completion", R"({"prompt":"a","n_predict":-2})", 400},
            {"/tokenize", R"({"text":"a"})", 400},
            {"/detokenize", R"({"tokens":[99999999]})", 400},
            {"/api/extra/detokenize", R"({"ids":"a"})", 400},
            {"/api/v1/generate", R"({"prompt":"a","max_length":"5"})", 400},
            {"/api/v1/generate", R"({"prompt":"a","temperature":-1})", 400},
            {"/api/v1/generate", R"({"prompt":"a","top_p":1e309})", 400},
            {"/api/v1/generate", R"({"prompt":"a","stop_sequence":[""]})", 400},
            {"/api/v1/generate", R"({"prompt":"a","rep_pen":0.5})", 400},
            {"/api/v1/generate", invalidUtf8, 400},
            {"/api/extra/generate/stream", R"({"prompt":["a"]})", 400},
            {"/api/extra/tokencount", R"({"text":"a"})", 400},
            {"/v1/completions", R"({"prompt":"a","stop":["a","b","c","d","e"]})", 400},
            {"/v1/completions", R"({"prompt":[1,-2,3]})", 400},
            {"/v1/completions", R"({"prompt":[[1],[2]]})", 400},
            {"/v1/completions", R"({"prompt":[]})", 400},
            {"/v1/completions", R"({"prompt":[1,2.5]})", 400},
            {"/v1/completions", R"({"prompt":[99999999]})", 400},
            {"/v1/completions", R"({"prompt":"a","n":0})", 400},
            {"/v1/completions", R"({"prompt":"a","logprobs":21,"echo":true})", 400},
            {"/v1/completions", R"({"prompt":"a","max_tokens":1.5})", 400},
            {"/v1/nothing", R"({})", 404},
            {"/api/v1/generate", "{\"prompt\":\"" + std::string(5000, 'a') + "\"}", 413},
        };
        for (const auto& [path, body, expected] : cases) {
            auto r = c.Post(path, body, "application/json");
            QVERIFY2(r, path.c_str());
            QVERIFY2(r->status == expected,
                     qPrintable(QString::fromStdString(path + " " + body.substr(0, 60) + " -> " +
                                                       std::to_string(r->status))));
            auto error = json::parse(r->body, nullptr, false);
            QVERIFY2(error.contains("error") && error["error"]["message"].is_string(),
                     r->body.c_str());
        }
        auto r = c.Get("/v1/completions");
        QVERIFY(r && r->status >= 400 && r->status < 500);
        // Still serving.
        auto [status, ok] = post(c, "/api/v1/generate", R"({"prompt":"a","max_length":3})");
        QCOMPARE(status, 200);
        QCOMPARE(s->stats().generations, int64_t(1));
    }

    void apiKeyAndLoopback() {
        server::ServerOptions open;
        open.host = "0.0.0.0";
        const auto refused = server::validateServerOptions(open);
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message.find("API key") != std::string::npos);
        QVERIFY(server::isLoopbackHost("127.0.0.1") && server::isLoopbackHost("::1"));
        QVERIFY(!server::isLoopbackHost("192.168.1.2"));

        server::ServerOptions o;
        o.apiKey = "s3cret";
        auto s = start(o);
        QVERIFY(s);
        auto c = client(*s);
        QCOMPARE(c.Get("/api/v1/model")->status, 401);
        QCOMPARE(c.Get("/api/v1/model", {{"Authorization", "Bearer s3cre"}})->status, 401);
        QCOMPARE(c.Get("/api/v1/model", {{"Authorization", "Bearer s3cret!"}})->status, 401);
        QCOMPARE(c.Get("/api/v1/model", {{"Authorization", "Bearer s3cret"}})->status, 200);
        auto [status, a] = post(c, "/api/v1/generate", R"({"prompt":"a","max_length":2})",
                                {{"Authorization", "Bearer nope"}});
        QCOMPARE(status, 401);
        QCOMPARE(s->stats().generations, int64_t(0));
    }

    // One generation at a time with a queue of one: a second request is answered 503
    // at once; abort stops the first mid-stream and check shows its text so far.
    void queueBoundAbortAndCheck() {
        server::ServerOptions o;
        o.maxQueue = 1;
        o.maxGenerateTokens = 1000000;
        auto s = start(o);
        QVERIFY(s);
        std::string streamed;
        // Joined however the test ends (a failed check returns early).
        struct Joined {
            std::thread thread;
            server::Server& server;
            ~Joined() {
                if (thread.joinable()) {
                    server.stop();
                    thread.join();
                }
            }
        } long_{std::thread([&] {
                    auto c = client(*s);
                    auto r = c.Post("/api/extra/generate/stream",
                                    json{{"prompt", kPrompt},
                                         {"max_length", 1000000},
                                         {"genkey", "k1"},
                                         {"logprobs", true},
                                         {"use_default_badwordsids", true}} // runs until aborted
                                        .dump(),
                                    "application/json");
                    if (r)
                        streamed = r->body;
                }),
                *s};
        auto c = client(*s);
        QVERIFY(waitFor([&] {
            auto [status, check] = post(c, "/api/extra/generate/check", R"({"genkey":"k1"})");
            return status == 200 && !check["results"][0]["text"].get<std::string>().empty();
        }));
        // KoboldAI Lite asks for the logprobs just before it aborts: what is generated so
        // far (issue 65: null while the generation ran); another genkey has none.
        auto [lpStatus, lp] = post(c, "/api/extra/last_logprobs", R"({"genkey":"k1"})");
        QCOMPARE(lpStatus, 200);
        QVERIFY2(lp["logprobs"].is_object() && !lp["logprobs"]["content"].empty(),
                 lp.dump().c_str());
        QCOMPARE(lp["logprobs"]["content"][0]["top_logprobs"].size(), size_t(5));
        QVERIFY(
            post(c, "/api/extra/last_logprobs", R"({"genkey":"k2"})").second["logprobs"].is_null());
        auto [busy, answer] = post(c, "/api/v1/generate", R"({"prompt":"a","max_length":2})");
        QCOMPARE(busy, 503);
        QVERIFY(answer["error"]["message"].get<std::string>().find("busy") != std::string::npos);
        auto [status, aborted] = post(c, "/api/extra/abort", R"({"genkey":"k1"})");
        QCOMPARE(status, 200);
        QCOMPARE(aborted["success"].get<std::string>(), std::string("true"));
        long_.thread.join();
        QVERIFY(streamed.size() > 20);
        const std::string last =
            "event: message\ndata: {\"token\":\"\",\"finish_reason\":\"stop\"}\n\n";
        QVERIFY(streamed.compare(streamed.size() - last.size(), last.size(), last) == 0);
        QVERIFY(s->stats().completions.generatedTokens < 1000000);
        QVERIFY(waitFor([&] { return s->stats().queued == 0; }));
        QCOMPARE(post(c, "/api/v1/generate", R"({"prompt":"a","max_length":2})").first, 200);
    }

    // A client that goes away, streaming or not, stops its generation.
    void disconnectStopsGeneration() {
        server::ServerOptions o;
        o.maxGenerateTokens = 1000000;
        auto s = start(o);
        QVERIFY(s);
        {
            httplib::Client c("127.0.0.1", s->port());
            httplib::Request req;
            req.method = "POST";
            req.path = "/api/extra/generate/stream";
            req.body = json{{"prompt", kPrompt},
                            {"max_length", 1000000},
                            {"use_default_badwordsids", true}} // runs until hung up on
                           .dump();
            req.set_header("Content-Type", "application/json");
            int chunks = 0;
            req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
                return ++chunks < 3; // read a little, then hang up
            };
            c.send(req);
            QVERIFY(chunks >= 3);
        }
        QVERIFY(waitFor([&] { return s->stats().queued == 0 && s->stats().generations == 1; }));
        const int64_t afterStream = s->stats().completions.generatedTokens;
        QVERIFY(afterStream < 1000000);
        {
            httplib::Client c("127.0.0.1", s->port());
            c.set_read_timeout(1, 0); // gives up waiting for the whole answer
            auto r = c.Post("/api/v1/generate",
                            json{{"prompt", kPrompt},
                                 {"max_length", 1000000},
                                 {"use_default_badwordsids", true}}
                                .dump(),
                            "application/json");
            QVERIFY(!r);
        }
        QVERIFY(waitFor([&] { return s->stats().queued == 0 && s->stats().generations == 2; }));
        QVERIFY(s->stats().completions.generatedTokens - afterStream < 1000000);
    }
};

QTEST_GUILESS_MAIN(TestServer)
#include "tst_server.moc"
