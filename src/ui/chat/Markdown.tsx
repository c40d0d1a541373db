import { lazy, Suspense } from 'react';
import ReactMarkdown, { type Components, type ExtraProps } from 'react-markdown';
import remend from 'remend';
import { i18next } from '../../i18n';
import type { ScrollableCode } from './CodeBlock';

// The highlighter and its grammars load with the first code block, not with the chat.
const CodeBlock = lazy(() => import('./CodeBlock').then((module) => ({ default: module.CodeBlock })));

/**
 * A code block's <pre> scrolls sideways when a line is longer than the bubble: it takes the
 * focus, named, so that the keyboard can scroll it too (axe's scrollable-region-focusable).
 */
function scrollableCode(language: string | undefined): ScrollableCode {
  return {
    tabIndex: 0,
    role: 'group',
    'aria-label': language ? i18next.t('chat:messages.codeIn', { language }) : i18next.t('chat:messages.code'),
  };
}

/** What a code block shows until the highlighter has loaded: the same text, unhighlighted. */
function PlainCode({ text, scrollable }: { text: string; scrollable: ScrollableCode }) {
  return (
    <pre
      {...scrollable}
      className="overflow-auto bg-[#fafafa] p-[1em] font-mono leading-normal text-[#383a42] focus:outline-none"
    >
      <code>{text}</code>
    </pre>
  );
}

const aliases: Record<string, string> = { js: 'javascript', ts: 'typescript', py: 'python', sh: 'bash', shell: 'bash' };

type Element = NonNullable<ExtraProps['node']>;
type ElementContent = Element['children'][number];

/** The text of a syntax-tree node: what a code block holds, however much has arrived. */
function textOf(node: ElementContent | undefined): string {
  if (!node) return '';
  if (node.type === 'text') return node.value;
  if (node.type === 'element') return node.children.map(textOf).join('');
  return '';
}

const components: Components = {
  h1: ({ children }) => <h1 className="mt-3 mb-2 text-xl font-bold">{children}</h1>,
  h2: ({ children }) => <h2 className="mt-3 mb-2 text-lg font-bold">{children}</h2>,
  h3: ({ children }) => <h3 className="mt-2 mb-1 text-base font-semibold">{children}</h3>,
  p: ({ children }) => <p className="my-2 leading-relaxed">{children}</p>,
  ul: ({ children }) => <ul className="my-2 list-disc pl-6">{children}</ul>,
  ol: ({ children }) => <ol className="my-2 list-decimal pl-6">{children}</ol>,
  blockquote: ({ children }) => (
    <blockquote className="my-2 border-l-4 border-indigo-200 pl-3 text-slate-600 italic">{children}</blockquote>
  ),
  strong: ({ children }) => <strong className="font-semibold">{children}</strong>,
  em: ({ children }) => <em className="italic">{children}</em>,
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer" className="text-indigo-600 underline">
      {children}
    </a>
  ),
  // A fenced block is a <pre><code> pair; it is drawn from the syntax tree, so a block
  // that is still open while the reply streams (even an empty one) shows what has
  // arrived so far, highlighted as it grows.
  pre: ({ node }) => {
    const code = node?.children.find((child): child is Element => child.type === 'element');
    const classes = code?.properties.className;
    const match = /^language-([\w-]+)$/.exec(
      (Array.isArray(classes) ? classes : []).map(String).find((c) => c.startsWith('language-')) ?? '',
    );
    const language = match ? (aliases[match[1] ?? ''] ?? match[1]) : undefined;
    const text = textOf(code).replace(/\n$/, '');
    const scrollable = scrollableCode(language);
    return (
      <div
        data-testid="code-block"
        data-language={language ?? 'text'}
        // The ring shows where the focus is when the <pre> inside has it (from the keyboard).
        className="my-2 overflow-hidden rounded-lg text-sm has-[pre:focus-visible]:ring-2 has-[pre:focus-visible]:ring-indigo-400"
      >
        <Suspense fallback={<PlainCode text={text} scrollable={scrollable} />}>
          <CodeBlock language={language} text={text} scrollable={scrollable} />
        </Suspense>
      </div>
    );
  },
  // Only inline code reaches here: blocks are drawn whole by `pre`.
  code: ({ children }) => (
    <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[0.9em] text-pink-700">{children}</code>
  ),
};

/**
 * What a reply still streaming is drawn from: the emphasis, inline code and links that have
 * opened but not yet closed are closed for the moment, so "**bold te" reads as bold text
 * rather than raw asterisks (issue #26). An unfinished link shows its text only, never a link
 * to an address that has not arrived; an unfinished image waits for its address.
 */
function healed(text: string): string {
  // remend drops trailing spaces; inside an open code block they are code, so they stay.
  const body = text.replace(/[ \t]+$/, '');
  return remend(body, { linkMode: 'text-only', images: false }) + text.slice(body.length);
}

/** Assistant replies: markdown without raw HTML (react-markdown never renders it). */
export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  return <ReactMarkdown components={components}>{streaming ? healed(text) : text}</ReactMarkdown>;
}
