// A program of the Agents SDK conformance test (agents_sdk.test.mjs): an agent of the
// OpenAI Agents SDK (@openai/agents) with its default settings — the Responses API, the
// default OpenAI client configured only by the environment (OPENAI_BASE_URL,
// OPENAI_API_KEY) — and two function tools, run for TURNS turns that continue the
// conversation by previousResponseId (from FIRST_PREVIOUS, or a new one). Prints one JSON
// line: {"first","last","inputs"}: the first and last response ids and the user inputs
// sent. Usage: node agents_runner.mjs TURNS LABEL [FIRST_PREVIOUS]
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';

const [turns, label, firstPrevious] = [Number(process.argv[2]), process.argv[3], process.argv[4]];

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `mild in ${city}`,
});
const getTime = tool({
  name: 'get_time',
  description: 'Local time of a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `noon in ${city}`,
});
const agent = new Agent({
  name: 'Travel agent',
  instructions: 'You are a travel agent. Use the tools for weather and time.',
  tools: [getWeather, getTime],
});

let previous = firstPrevious || undefined;
let first = null;
const inputs = [];
for (let turn = 0; turn < turns; ++turn) {
  const input = `${label} turn ${turn}: weather and time in city ${turn}?`;
  inputs.push(input);
  const result = await run(agent, input, previous ? { previousResponseId: previous } : {});
  first ??= result.rawResponses[0]?.responseId ?? null;
  previous = result.lastResponseId;
  if (!result.finalOutput) throw new Error(`turn ${turn}: no final output`);
}
process.stdout.write(JSON.stringify({ first, last: previous, inputs }) + '\n');
