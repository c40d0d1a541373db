import type { ChatModel } from '../../domain/chat';
import { isPlaceholderTitle } from '../../domain/conversation';
import { i18next } from '../../i18n';
import type { chatRu } from '../../i18n/locales/chat.ru';

const t = i18next.t;

type KnownModel = keyof (typeof chatRu)['models'];

function known(id: string): id is KnownModel {
  return i18next.exists(`chat:models.${id}.name`);
}

/** The model's name in the user's language when we know it (the offline assistant); else the server's. */
export function chatModelName(model: Pick<ChatModel, 'id' | 'name'>): string {
  return known(model.id) ? t(`chat:models.${model.id}.name`) : model.name;
}

export function chatModelDescription(model: Pick<ChatModel, 'id' | 'description'>): string {
  return known(model.id) ? t(`chat:models.${model.id}.description`) : model.description;
}

/** The server's default model by its name, for saying which model took a gone one's place. */
export function defaultModelName(list: { models: Record<string, ChatModel>; default: string }): string {
  const model = list.models[list.default];
  return model ? chatModelName(model) : list.default;
}

/** A conversation's title; the provisional "New Chat" in the user's language. */
export function conversationTitle(title: string): string {
  return isPlaceholderTitle(title) ? t('chat:sidebar.newChat') : title;
}
