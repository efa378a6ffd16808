import { expect, test } from "bun:test";
import { describeRequestError } from "../../../src/providers/errors.ts";

test("describeRequestError names the endpoint only when the request never reached it", () => {
  const refused = Object.assign(new Error("Connection error."), { cause: new Error("ECONNREFUSED: Unable to connect") });
  expect(describeRequestError(refused, "http://127.0.0.1:9931/v1")).toBe("Connection error.: ECONNREFUSED: Unable to connect (http://127.0.0.1:9931/v1)");
  const answered = Object.assign(new Error("400 request (3000 tokens) exceeds the available context size (2048 tokens)"), { status: 400 });
  expect(describeRequestError(answered, "http://127.0.0.1:9931/v1")).toBe(answered.message);
  expect(describeRequestError(new Error("fetch failed at http://h/v1"), "http://h/v1")).toBe("fetch failed at http://h/v1");
});
