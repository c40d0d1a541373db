import { lazy, Suspense } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';

// The highlighter and its grammars load with the first code block, not with the chat.
const CodeBlock = lazy(() => import('./CodeBlock').then((module) => ({ default: module.CodeBlock })));

/** What a code block shows until the highlighter has loaded: the same text, unhighlighted. */
function PlainCode({ text }: { text: string }) {
  return (
    <pre className="overflow-auto bg-[#fafafa] p-[1em] font-mono leading-normal text-[#383a42]">
      <code>{text}</code>
    </pre>
  );
}

const aliases: Record<string, string> = { js: 'javascript', ts: 'typescript', py: 'python', sh: 'bash', shell: 'bash' };

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
  pre: ({ children }) => <>{children}</>,
  code: ({ className, children }) => {
    const match = /language-([\w-]+)/.exec(className ?? '');
    const text = String(children as string).replace(/\n$/, '');
    if (!match && !text.includes('\n')) {
      return <code className="rounded bg-slate-100 px-1 py-0.5 font-mono text-[0.9em] text-pink-700">{children}</code>;
    }
    const language = match ? (aliases[match[1] ?? ''] ?? match[1]) : undefined;
    return (
      <div
        data-testid="code-block"
        data-language={language ?? 'text'}
        className="my-2 overflow-hidden rounded-lg text-sm"
      >
        <Suspense fallback={<PlainCode text={text} />}>
          <CodeBlock language={language} text={text} />
        </Suspense>
      </div>
    );
  },
};

/** Assistant replies: markdown without raw HTML (react-markdown never renders it). */
export function Markdown({ text }: { text: string }) {
  return <ReactMarkdown components={components}>{text}</ReactMarkdown>;
}
