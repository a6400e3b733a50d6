import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, type UIMessage } from "ai";
import { useState } from "react";

/**
 * The chat page's component, for a React app served beside the Worker (Vite, Next.js…). `useChat` sends
 * its whole history with every message; the Worker reads only the new message and answers from the
 * history it stored. Load `initialMessages` with `GET /api/<user>/chats/<chat>`.
 */
export function Chat({
  user,
  chat,
  initialMessages,
}: {
  user: string;
  chat: string;
  initialMessages: UIMessage[];
}) {
  const { messages, sendMessage, regenerate, status, error } = useChat({
    id: chat,
    messages: initialMessages,
    transport: new DefaultChatTransport({ api: `/api/${user}/chats/${chat}` }),
  });
  const [input, setInput] = useState("");
  return (
    <div>
      {messages.map((message) => (
        <p key={message.id}>
          <b>{message.role}:</b>{" "}
          {message.parts.map((part) => (part.type === "text" ? part.text : "")).join("")}
        </p>
      ))}
      {error && <p role="alert">{error.message}</p>}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          sendMessage({ text: input });
          setInput("");
        }}
      >
        <input
          value={input}
          onChange={(event) => setInput(event.target.value)}
          disabled={status !== "ready"}
        />
        <button type="submit" disabled={status !== "ready"}>
          Send
        </button>
        <button
          type="button"
          onClick={() => regenerate()}
          disabled={status !== "ready" || messages.length === 0}
        >
          Answer again
        </button>
      </form>
    </div>
  );
}
