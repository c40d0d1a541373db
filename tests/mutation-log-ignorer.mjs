// A Stryker ignorer plugin (stryker.config.mjs, `ignorers`): the arguments of a log call are
// not mutated. What a log line says (its text, its fields) is for the operator reading it; no
// rule of SPEC, DESIGN or an issue states it, so a changed text or an emptied field object is
// not a bug a test should catch. The code around a log call is still mutated: the condition
// that decides whether to log, and a `.catch` handler replaced by one that does nothing.
// The plugin kind is Stryker's own, documented with this very use ("ignore all
// `console.debug()` statements", stryker-js pull request 4487).
import { declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

const isIdentifier = (node, name) => node?.type === 'Identifier' && node.name === name;
const isMember = (node) => node?.type === 'MemberExpression' && !node.computed;

/** `this.log(...)`, the callback the queue is given, and `<anything>.log.<level>(...)` (pino). */
function isLogCall(node) {
  if (node?.type !== 'CallExpression' || !isMember(node.callee)) return false;
  const { object, property } = node.callee;
  if (object.type === 'ThisExpression' && isIdentifier(property, 'log')) return true;
  return (
    property.type === 'Identifier' &&
    LEVELS.has(property.name) &&
    isMember(object) &&
    isIdentifier(object.property, 'log')
  );
}

class LogIgnorer {
  shouldIgnore(path) {
    return isLogCall(path.node) ? 'A log line: its text and fields are for operators, not a rule.' : undefined;
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Ignore, 'log-lines', LogIgnorer)];
