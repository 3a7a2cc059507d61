interface Answer { text: string; confidence: number }
interface Question { id: string; text: string }
const qs: Question[] = await codemode.faq_open_questions({ limit: 5 });
const answers: Answer[] = [];
for (const q of qs) answers.push(await codemode.llm_answer({ question: q.text }));
return qs.map((q, i) => ({ q: q.text, a: answers[i]!.text, sure: answers[i]!.confidence > 0.8 }));
