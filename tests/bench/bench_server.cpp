// The server's prefix cache, as a front end uses it: a story of N tokens resent whole
// with every request, grown by G tokens each time, R requests, and then one request
// whose last E tokens were edited. Time to first token (the first streamed SSE event of
// /api/extra/generate/stream) of every request, against a cold server reading the same
// story, and against a restarted server that finds the states the first one saved in
// its database (as baton-cli serve does by default). Several rounds, each on a fresh
// server and database; medians.
//
// Then front ends that cut the story's front themselves to stay under their context
// size (KoboldAI Lite at 6,144 tokens, SillyTavern at 8,192), with memory before the
// story and an author's note near its end: the same story grown the same way, each
// request's time to first token; the trimmed prompts continue the stream the server
// read (server/src/stream_match.h), so the last should cost what the second does.
//
//   bench_server [--model DIR] [--book FILE] [--story-tokens 20000] [--grow 50]
//                [--requests 20] [--edit 200] [--rounds 3]
#include "bench_util.h"

#include <baton/engine/model.h>
#include <baton/engine/tokenizer.h>
#include <baton/server/server.h>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

using namespace baton;

namespace {

// Seconds from sending the request to its first streamed token.
double timeToFirstToken(int port, const std::string& prompt, const std::string& memory = "") {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(600, 0);
    httplib::Request req;
    req.method = "POST";
    req.path = "/api/extra/generate/stream";
    req.body = nlohmann::json{
        {"memory", memory},
        {"prompt", prompt},
        {"max_length", 8},
        {"temperature",
         0}}.dump();
    req.set_header("Content-Type", "application/json");
    const auto t0 = bench::Clock::now();
    double first = -1;
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
        if (first < 0)
            first = bench::secondsSince(t0);
        return true;
    };
    auto r = c.send(req);
    if (!r || r->status != 200) {
        std::cerr << "error: the request failed\n";
        std::exit(1);
    }
    return first;
}

// A front end that keeps the story under its context size cuts its front itself:
// memory first, then the story's last `keep` tokens (cut a few characters into a word,
// as a cut by characters falls), with an author's note `noteDepth` tokens before the
// end. The times to first token of each request, on a fresh server.
std::vector<double> trimmedRequests(engine::ModelQueue& host, const engine::Tokenizer& tok,
                                    const std::vector<int32_t>& ids, int storyTokens, int grow,
                                    int requests, int keep, int noteDepth) {
    server::ServerOptions o;
    o.port = 0;
    server::Server s(host, o);
    if (!s.start()) {
        std::cerr << "error: cannot start the server\n";
        std::exit(1);
    }
    const std::string memory = "[This is a novel by Jane Austen. Emma Woodhouse is its "
                               "heroine.]\n";
    const std::string note = "\n[Author's note: write in the style of the chapter.]\n";
    std::vector<double> ttft;
    for (int r = 0; r < requests; ++r) {
        const auto end = ids.begin() + storyTokens + grow * r;
        std::string story = tok.decode({end - keep, end - noteDepth}).substr(3);
        story += note + tok.decode({end - noteDepth, end});
        ttft.push_back(timeToFirstToken(s.port(), story, memory));
    }
    return ttft;
}

} // namespace

int main(int argc, char** argv) {
    const std::string modelDir =
        bench::arg(argc, argv, "model", BATON_SOURCE_DIR "/resources/models/baton-mini");
    const std::string book =
        bench::arg(argc, argv, "book", BATON_SHARED_DIR "/corpus/books/austen-emma.txt");
    const int storyTokens = std::stoi(bench::arg(argc, argv, "story-tokens", "20000"));
    const int grow = std::stoi(bench::arg(argc, argv, "grow", "50"));
    const int requests = std::stoi(bench::arg(argc, argv, "requests", "20"));
    const int edit = std::stoi(bench::arg(argc, argv, "edit", "200"));
    const int rounds = std::stoi(bench::arg(argc, argv, "rounds", "3"));
    spdlog::set_level(spdlog::level::warn); // stdout carries only the JSON lines
    engine::initializeRuntime();
    auto model = engine::Model::load(modelDir);
    if (!model) {
        std::cerr << "error: " << model.error().message << "\n";
        return 1;
    }
    std::ifstream in(book);
    std::stringstream text;
    text << in.rdbuf();
    const auto tok = (*model)->tokenizer();
    const std::vector<int32_t> ids = tok->encode(text.str());
    const size_t needed = size_t(storyTokens + grow * requests + edit);
    if (ids.size() < needed + size_t(edit)) {
        std::cerr << "error: the book has " << ids.size() << " tokens; " << needed << " needed\n";
        return 1;
    }
    auto prefix = [&](size_t n) { return tok->decode({ids.begin(), ids.begin() + long(n)}); };
    const std::string fields = "\"model\": \"" + (*model)->info().path +
                               "\", \"story_tokens\": " + std::to_string(storyTokens) +
                               ", \"grow\": " + std::to_string(grow) +
                               ", \"requests\": " + std::to_string(requests);

    std::vector<double> cold, second, last, edited, coldFull, maxWarm, restarted;
    engine::ModelQueue host(*model);
    for (int round = 0; round < rounds; ++round) {
        server::ServerOptions o;
        o.port = 0;
        const std::string states = (std::filesystem::temp_directory_path() /
                                    ("bench_server_states_" + std::to_string(::getpid()) + "_" +
                                     std::to_string(round) + ".db"))
                                       .string();
        o.statesDatabase = states;
        auto warmServer = std::make_unique<server::Server>(host, o);
        server::Server& warm = *warmServer;
        if (!warm.start()) {
            std::cerr << "error: cannot start the server\n";
            return 1;
        }
        std::vector<double> ttft;
        for (int r = 0; r < requests; ++r)
            ttft.push_back(timeToFirstToken(warm.port(), prefix(size_t(storyTokens + grow * r))));
        cold.push_back(ttft.front());
        second.push_back(ttft[1]);
        last.push_back(ttft.back());
        maxWarm.push_back(*std::max_element(ttft.begin() + 1, ttft.end()));
        // The last request again with its last `edit` tokens replaced by other text.
        const size_t end = size_t(storyTokens + grow * (requests - 1));
        std::vector<int32_t> changed(ids.begin(), ids.begin() + long(end - size_t(edit)));
        changed.insert(changed.end(), ids.begin() + long(needed),
                       ids.begin() + long(needed + edit));
        edited.push_back(timeToFirstToken(warm.port(), tok->decode(changed)));
        warmServer.reset();
        server::Server again(host, o); // the same database: the saved states
        if (!again.start())
            return 1;
        restarted.push_back(timeToFirstToken(again.port(), prefix(end)));
        server::ServerOptions memoryOnly;
        memoryOnly.port = 0;
        server::Server fresh(host, memoryOnly);
        if (!fresh.start())
            return 1;
        coldFull.push_back(timeToFirstToken(fresh.port(), prefix(end)));
        for (const char* suffix : {"", "-wal", "-shm"})
            std::filesystem::remove(states + suffix);
    }
    // Front ends that trim: KoboldAI Lite at its default context (6,144 tokens, less its
    // default 768 to generate and some room: it keeps about 5,300 of story), SillyTavern
    // at 8,192.
    struct Trimming {
        const char* client;
        int keep, noteDepth;
    };
    const Trimming trimming[] = {{"koboldai_lite_6144", 6144 - 768 - 100, 100},
                                 {"sillytavern_8192", 8192 - 350 - 100, 60}};
    std::vector<std::vector<double>> trimmedFirst(2), trimmedSecond(2), trimmedLast(2),
        trimmedMax(2);
    for (int round = 0; round < rounds; ++round)
        for (size_t t = 0; t < 2; ++t) {
            const auto ttft = trimmedRequests(host, *tok, ids, storyTokens, grow, requests,
                                              trimming[t].keep, trimming[t].noteDepth);
            trimmedFirst[t].push_back(ttft.front());
            trimmedSecond[t].push_back(ttft[1]);
            trimmedLast[t].push_back(ttft.back());
            trimmedMax[t].push_back(*std::max_element(ttft.begin() + 1, ttft.end()));
        }
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    for (size_t t = 0; t < 2; ++t) {
        const std::string f = fields + ", \"client\": \"" + trimming[t].client +
                              "\", \"kept_tokens\": " + std::to_string(trimming[t].keep);
        const double first = bench::median(trimmedFirst[t]),
                     second = bench::median(trimmedSecond[t]),
                     lastTrimmed = bench::median(trimmedLast[t]);
        bench::report("server_trimmed_prompts", "ttft_first_request_cold", first, "s", f);
        bench::report("server_trimmed_prompts", "ttft_second_request", second, "s", f);
        bench::report("server_trimmed_prompts", "ttft_last_request", lastTrimmed, "s", f);
        bench::report("server_trimmed_prompts", "ttft_slowest_after_first",
                      bench::median(trimmedMax[t]), "s", f);
        bench::report("server_trimmed_prompts", "last_over_second", ratio(lastTrimmed, second),
                      "ratio", f + ", \"target_at_most\": 1.5");
        bench::report("server_trimmed_prompts", "first_over_last", ratio(first, lastTrimmed),
                      "ratio", f);
    }
    const double mSecond = bench::median(second), mLast = bench::median(last);
    bench::report("server_prefix_cache", "ttft_first_request_cold", bench::median(cold), "s",
                  fields);
    bench::report("server_prefix_cache", "ttft_second_request", mSecond, "s", fields);
    bench::report("server_prefix_cache", "ttft_last_request", mLast, "s", fields);
    bench::report("server_prefix_cache", "ttft_slowest_warm_request", bench::median(maxWarm), "s",
                  fields);
    bench::report("server_prefix_cache", "ttft_last_200_edited", bench::median(edited), "s",
                  fields + ", \"edited_tokens\": " + std::to_string(edit));
    bench::report("server_prefix_cache", "ttft_same_story_cold_server", bench::median(coldFull),
                  "s", fields);
    bench::report("server_prefix_cache", "ttft_same_story_restarted_server",
                  bench::median(restarted), "s", fields);
    bench::report("server_prefix_cache", "last_over_second", ratio(mLast, mSecond), "ratio",
                  fields + ", \"target_at_most\": 1.3");
    bench::report("server_prefix_cache", "edited_over_second",
                  ratio(bench::median(edited), mSecond), "ratio",
                  fields + ", \"target_at_most\": 1.3");
    bench::report("server_prefix_cache", "cold_over_last", ratio(bench::median(coldFull), mLast),
                  "ratio", fields);
    return 0;
}
