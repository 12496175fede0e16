// i18n.js — every text a person reads on the Web App, in English and
// Simplified Chinese, looked up through ../ui/i18n.js; and the rule for
// which language a reader gets.

import { i18n, pickLanguage } from '../ui/i18n.js';

const T = {
  en: {
    newChat: 'New chat', send: 'Send', stop: 'Stop', placeholder: 'Ask anything…',
    conversations: 'Conversations', pinned: 'Pinned', rename: 'Rename', delete: 'Delete',
    pin: 'Pin', unpin: 'Unpin', confirmDelete: 'Delete this conversation?',
    newName: 'New name', start: 'Start chat', required: 'is required',
    thinking: 'Thinking…', stopped: 'Stopped', error: 'Something went wrong',
    like: 'Like', dislike: 'Dislike', copy: 'Copy', regenerate: 'Regenerate',
    menu: 'Conversations', language: '中文', disabled: 'This app is not available.',
    notFound: 'This app does not exist.', passcode: 'Passcode', enter: 'Enter',
    run: 'Run', result: 'Result', steps: 'Steps', clear: 'Clear', tool: 'Tool',
    suggested: 'Suggested', optional: 'optional', saved: 'Saved', save: 'Save',
    moreLikeThis: 'More like this', select: 'Select…', close: 'Close',
    attach: 'Attach a file', remove: 'Remove', cancel: 'Cancel', download: 'Download',
    fileLink: 'Attach a file by its link', record: 'Speak', stopRecording: 'Stop recording',
    play: 'Read aloud', citations: 'Citations', answers: 'Answers',
    prevAnswer: 'Previous answer', nextAnswer: 'Next answer',
  },
  zh: {
    newChat: '新对话', send: '发送', stop: '停止响应', placeholder: '和机器人聊天',
    conversations: '对话列表', pinned: '已置顶', rename: '重命名', delete: '删除',
    pin: '置顶', unpin: '取消置顶', confirmDelete: '确认删除该对话？',
    newName: '新名称', start: '开始对话', required: '为必填项',
    thinking: '思考中…', stopped: '已停止', error: '出错了',
    like: '赞同', dislike: '反对', copy: '复制', regenerate: '重新生成',
    menu: '对话列表', language: 'English', disabled: '应用不可用。',
    notFound: '应用不存在。', passcode: '访问密码', enter: '进入',
    run: '运行', result: '结果', steps: '步骤', clear: '清空', tool: '工具',
    suggested: '推荐问题', optional: '选填', saved: '已保存', save: '保存',
    moreLikeThis: '更多类似的', select: '请选择…', close: '关闭',
    attach: '上传文件', remove: '移除', cancel: '取消', download: '下载',
    fileLink: '粘贴文件链接', record: '语音输入', stopRecording: '停止录音',
    play: '播放', citations: '引用', answers: '回答',
    prevAnswer: '上一个回答', nextAnswer: '下一个回答',
  },
};

// t(key) -> the text in the language chosen (a live binding: importers
// see the choice once made).
export let t = i18n(T, 'en');

function use(lang) {
  t = i18n(T, lang);
  document.documentElement.lang = lang === 'zh' ? 'zh-Hans' : 'en';
}

// Chooses the language: the reader's own choice, else the site's
// default_language when it is not the default, else the browser's.
export function chooseLanguage(siteLang) {
  const own = localStorage.getItem('webapp-lang');
  if (own !== 'en' && own !== 'zh' && siteLang && siteLang !== 'en-US') use(siteLang.startsWith('zh') ? 'zh' : 'en');
  else use(pickLanguage(['en', 'zh'], 'webapp-lang'));
  return t.lang;
}

export function toggleLanguage() {
  const next = t.lang === 'zh' ? 'en' : 'zh';
  localStorage.setItem('webapp-lang', next);
  use(next);
}
