import type { ChatModel } from '../../domain/chat';
import { isPlaceholderTitle, type ModelList } from '../../domain/conversation';
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

/** A model by its name in the list (in the user's language when we know it); one not listed by its id. */
export function modelNameIn(models: ModelList | null, id: string | null): string | undefined {
  if (!id) return undefined;
  const model = models?.models[id];
  return model ? chatModelName(model) : id;
}

/** A conversation's title; the provisional "New Chat" in the user's language. */
export function conversationTitle(title: string): string {
  return isPlaceholderTitle(title) ? t('chat:sidebar.newChat') : title;
}
