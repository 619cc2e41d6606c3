// The sliced serializer writes what JSON.stringify writes for execution results, however deep,
// and lets timers run while it works through a large answer.
import { GraphQLError } from "graphql";
import { expect, it } from "vitest";
import { stringifySliced } from "../../api/graphql/serialize.ts";

it("equals JSON.stringify on data below and above the slicing depth, with errors and extensions", async () => {
  const deep = {
    a: [1, 'x"y\u2028', null, { b: [[[[[{ c: 1.5, d: true, u: undefined }]]]]] }],
    e: { f: { g: { h: { i: { j: "k", l: [undefined, -0, 1e21] } } } } },
    "k\n": [],
    m: {},
  };
  const results = [
    { data: deep },
    { data: null, errors: [new GraphQLError("boom", { extensions: { code: "X" } })] },
    { errors: [new GraphQLError("e")] },
    { data: deep, errors: [new GraphQLError("p", { path: ["a", 0] })], extensions: { z: 1 } },
  ];
  for (const r of results) expect(await stringifySliced(r)).toBe(JSON.stringify(r));
});

it("yields to the event loop while serializing a large answer", async () => {
  const point = { date: "2020-01-01", return: 0.0123, year: null, month: null, min: null, max: null };
  const series = (n: number) => ({ name: "AAPL", data: Array.from({ length: n }, () => ({ ...point })) });
  const data = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`a${i}`, { performance: [series(40_000)] }]));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  const text = await stringifySliced({ data });
  clearInterval(timer);
  expect(text).toBe(JSON.stringify({ data }));
  expect(ticks).toBeGreaterThan(0); // JSON.stringify in one piece would leave no room for the timer
});
