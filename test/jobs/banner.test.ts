// The start banner shows a generated demo key once, as plain text (not a JSON log line), and
// links the API reference.
import { describe, expect, it } from "vitest";
import { readyLine, startBanner } from "../../jobs/host/banner.ts";

const KEY = "srk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde";

describe("start banner", () => {
  it("shows a generated key exactly once, on a plain line", () => {
    const text = startBanner({ url: "http://127.0.0.1:8080", demoKey: KEY });
    expect(text.split(KEY)).toHaveLength(2);
    const line = text.split("\n").find((l) => l.includes(KEY))!;
    expect(() => JSON.parse(line)).toThrow();
    expect(text).toContain("REST API: http://127.0.0.1:8080/data/v1");
  });

  it("says what is served until the serving line, which names the snapshot", () => {
    const text = startBanner({ url: "http://127.0.0.1:8080", demoKey: null, data: "data: loading snapshot S1" });
    expect(text.split("\n")).toContain("data: loading snapshot S1");
    expect(readyLine("http://127.0.0.1:8080", "S1")).toBe("serving http://127.0.0.1:8080/data/v1 (snapshot S1)\n");
  });

  it("links the API reference and the OpenAPI document", () => {
    const text = startBanner({ url: "http://127.0.0.1:8080", demoKey: null });
    expect(text).toContain("http://127.0.0.1:8080/docs");
    expect(text).toContain("http://127.0.0.1:8080/data/v1/openapi.json");
    expect(text).toContain("the DEMO_API_KEY you set");
  });

  it("names the GraphQL endpoint, and the switch hint when another source is kept", () => {
    const text = startBanner({
      url: "http://127.0.0.1:8080",
      demoKey: null,
      hint: "to serve another source: SOURCE_DIR=DIR npm start",
    });
    expect(text).toContain("GraphQL: http://127.0.0.1:8080/graphiql");
    expect(text).toContain("to serve another source: SOURCE_DIR=DIR npm start");
  });
});
