// A tool-calling agent: the model asks for a tool, a ToolNode runs it, and the model answers from
// the result. Offline, the local model decides deterministically: two numbers in the question call
// the tool of the question's operator (`multiply` for `*`, `×`, "times", "multiply", "product";
// `add` for the rest, a subtraction adding the negated number; a division is declined), anything
// else calls `get_weather` for the question's last capitalised word; a tool result is answered by
// quoting it.

import { SystemMessage } from '@langchain/core/messages';
import type { BaseMessage, ToolCall } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { Runtime } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { ChatContext, chatSettings } from './chat.ts';
import { chooseChatModel } from './models/choose-model.ts';
import { messageText } from './models/local-chat-model.ts';
import type { ScriptedReply } from './models/local-chat-model.ts';

export const getWeather = tool(async ({ city }: { city: string }) => `It's always sunny in ${city}.`, {
  name: 'get_weather',
  description: 'Current weather for a city.',
  schema: z.object({ city: z.string().describe('The city name.') }),
});

export const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
  name: 'add',
  description: 'Adds two numbers.',
  schema: z.object({ a: z.number(), b: z.number() }),
});

export const multiply = tool(async ({ a, b }: { a: number; b: number }) => String(a * b), {
  name: 'multiply',
  description: 'Multiplies two numbers.',
  schema: z.object({ a: z.number(), b: z.number() }),
});

const TOOLS = [getWeather, add, multiply];

const MULTIPLICATION = /\*|×|\btimes\b|multipl|\bproduct\b/i;
const SUBTRACTION = /\d\s+-\s*\d|\bminus\b|\bsubtract/i;
const DIVISION = /\d\s*[/÷]\s*-?\d|\bdivided\b|\bdivide\b/i;

/** The arithmetic tool call a question with two numbers asks for, by its operator. */
function arithmeticCall(question: string, numbers: readonly string[], id: string, toolNames: readonly string[]) {
  const [a, b] = [Number(numbers[0]), Number(numbers[1])];
  if (MULTIPLICATION.test(question) && toolNames.includes('multiply')) {
    return { id, name: 'multiply', args: { a, b }, type: 'tool_call' } satisfies ToolCall;
  }
  if (DIVISION.test(question) || !toolNames.includes('add')) return undefined;
  // "17 - 5" reads as 17 and 5 (the minus sign is not the number's): add the negated number.
  const subtrahend = SUBTRACTION.test(question) && b > 0 ? -b : b;
  return { id, name: 'add', args: { a, b: subtrahend }, type: 'tool_call' } satisfies ToolCall;
}

/** The offline model's policy (exported for tests): call a tool for a question, answer a result. */
export function toolScript(messages: readonly BaseMessage[], toolNames: readonly string[]): ScriptedReply {
  const last = messages[messages.length - 1];
  if (last?.getType() === 'tool') return { content: `The tool says: ${messageText(last)}` };
  const question = messageText(last);
  // Ids only need to be unique within the thread; the message count makes them so, deterministically.
  const id = `call_${messages.length}`;
  const numbers = question.match(/-?\d+(?:\.\d+)?/g);
  let call: ToolCall;
  if (numbers && numbers.length >= 2) {
    const arithmetic = arithmeticCall(question, numbers, id, toolNames);
    if (!arithmetic) return { content: 'I can add, subtract and multiply two numbers, but not that.' };
    call = arithmetic;
  } else if (toolNames.includes('get_weather')) {
    const city = question.match(/[A-Z][a-zA-Z]+/g)?.pop() ?? 'San Francisco';
    call = { id, name: 'get_weather', args: { city }, type: 'tool_call' };
  } else {
    return { content: 'I have no tools to answer that.' };
  }
  return { content: '', toolCalls: [call] };
}

const AgentState = new StateSchema({ messages: MessagesValue });

async function agent(state: typeof AgentState.State, runtime: Runtime<ChatContext>) {
  const { modelName, systemPrompt } = chatSettings(runtime);
  const model = chooseChatModel(modelName, { script: toolScript });
  if (!model.bindTools) throw new Error(`model ${modelName} cannot call tools`);
  const response = await model.bindTools(TOOLS).invoke([new SystemMessage(systemPrompt), ...state.messages], runtime);
  return { messages: [response] };
}

export const graph = new StateGraph(AgentState, ChatContext)
  .addNode('agent', agent)
  .addNode('tools', new ToolNode(TOOLS))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', END])
  .addEdge('tools', 'agent')
  .compile({ name: 'tools' });
